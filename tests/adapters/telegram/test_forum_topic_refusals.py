"""A forum topic closed or deleted under the bot: the place is gone, not the payload wrong.

Telegram refuses a send into a closed topic with ``Bad Request: TOPIC_CLOSED`` (``TOPIC_DELETED``
for a deleted one; a deleted topic of a group also answers ``Bad Request: message thread not
found``). A question refused so was seen by nobody: no text fallback is tried there, and the
question does not stay open to swallow the next message of the topic.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .harness import ALICE, BOB, GROUP, command_update, mention_update

FORUM = {**GROUP, "is_forum": True}
TOPIC = 77


def topic_created(topic: int) -> dict[str, Any]:
    """The service message opening a forum topic (what a message in the topic replies to)."""
    return {
        "message_id": topic,
        "date": int(time.time()),
        "chat": FORUM,
        "from": BOB,
        "message_thread_id": topic,
        "is_topic_message": True,
        "forum_topic_created": {"name": "Deploys", "icon_color": 7322096},
    }


def in_topic(text: str, user: dict[str, Any]) -> dict[str, Any]:
    return mention_update(text, user, chat=FORUM, thread_id=TOPIC, reply_to=topic_created(TOPIC))


def ask_on_deploy(turn: Any) -> Any:
    if turn.response is None and "deploy" in turn.text:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=["Done."])


@pytest.mark.parametrize(
    "description",
    ["Bad Request: TOPIC_CLOSED", "Bad Request: TOPIC_DELETED", "Bad Request: message thread not found"],
)
async def test_a_question_refused_by_a_gone_topic_does_not_stay_open(bench, description):
    runner = ScriptedRunner(ask_on_deploy)
    tg = await bench(runner)
    tg.api.fail_always("sendMessage", 400, description=description)
    await tg.deliver(in_topic("deploy A", BOB))
    await tg.settle()
    # one refused send: the question's text would go to the same topic, so none is tried
    refused = tg.api.of("sendMessage")
    assert len(refused) == 1 and refused[0].markup is not None
    assert refused[0].params["message_thread_id"] == str(TOPIC)

    tg.api.recover("sendMessage")  # an admin reopens the topic (or the bot is heard elsewhere)
    await tg.deliver(in_topic("summarize the logs", ALICE))
    await tg.deliver(command_update("/status@clari_bot", ALICE, chat=FORUM, thread_id=TOPIC))
    await tg.settle()
    # Alice's message is a plain request, not held against Bob's unseen question
    assert runner.calls[-1].text == "summarize the logs" and runner.calls[-1].response is None
    status = tg.api.of("sendMessage")[-1].params["text"]
    assert "Where this conversation stands" in status and "Waiting for" not in status
