"""With ``im:message.group_msg`` Feishu delivers every message of a group thread. A member who
writes in the bot's thread to *another member* (mentioning them, not the bot) is not talking to
the bot: nothing runs, and an open approval is not closed by it ("✖ Closed: … sent a new
message"). A message without mentions in the thread is still the bot's (how people answer and
follow up), and so is one that mentions the bot along with others.

"@所有人" (mention everyone) is Feishu's key ``@_all`` in a text message's text and a post's ``at``
node, with empty ids in ``mentions``, or not listed there at all (larksuite/openclaw-lark#381:
``mentions: []``): the agent reads "@所有人" in a Chinese message, "@all" otherwise, never the key;
what the agent writes back pings no one; and an announcement in the bot's thread is not for it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from tests.adapters.approval_agent import delete_records_agent
from tests.agent import user_graphs

from .cards import is_interactive, text_of
from .events import TENANT, message_event
from .test_scenarios import agent, ask

GROUP = {"chat": "oc_group", "chat_type": "group"}
CAROL = {"key": "@_user_2", "id": {"open_id": "ou_carol"}, "name": "Carol", "tenant_key": TENANT}
EVERYONE = {"key": "@_all", "id": {"open_id": "", "union_id": "", "user_id": ""}, "name": "所有人"}


def to_carol(text: str, user: str = "ou_alice", mention_bot: bool = False) -> dict[str, Any]:
    """``@Carol text`` written in the bot's thread (``mention_bot``: ``@bot`` before it too)."""
    event = message_event(f"@_user_2 {text}", user=user, root_id="om_root", mention_bot=mention_bot, **GROUP)
    message = event["event"]["message"]
    message["mentions"] = [*message["mentions"], CAROL]
    return event


@pytest.fixture
async def approvals(tmp_path: Any) -> Any:
    user_graphs.RAN.clear()
    made = delete_records_agent(tmp_path, ["approve", "edit", "reject"], "Finished.")
    yield made
    await made.aclose()


async def test_a_member_talking_to_another_member_leaves_someone_elses_approval_open(make_bot, approvals):
    bot = await make_bot(approvals)
    started = message_event(
        "clean up the users table", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )
    await bot.deliver(started)
    await bot.gateway.drain()
    approval_id, card = list(bot.api.cards.items())[-1]
    assert "delete_records" in text_of(card) and is_interactive(card)

    await bot.deliver(to_carol("can you check the backups before Bob approves?"))
    await bot.gateway.drain()

    shown = text_of(bot.api.cards[approval_id])
    assert "Closed" not in shown and is_interactive(bot.api.cards[approval_id]), shown
    assert user_graphs.RAN == []  # nothing deleted, nothing decided


async def test_a_member_talking_to_another_member_in_the_thread_is_not_run(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    question_id, _ = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )

    await bot.deliver(to_carol("what do you think, React or Vue?"))
    await bot.deliver(to_carol("React, I'd say", user="ou_bob"))  # the asker too, talking to Carol
    await bot.gateway.drain()
    assert len(bot.runner.calls) == 1  # addressed to Carol, not to the bot
    assert is_interactive(bot.api.cards[question_id])

    await bot.deliver(message_event("2", user="ou_bob", root_id="om_root", **GROUP))  # no mention: the bot's
    await bot.gateway.drain()
    assert [c.response.value for c in bot.runner.calls if c.response] == ["Vue"]


async def test_a_message_mentioning_the_bot_and_another_member_is_the_bots(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await ask(bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP)

    await bot.deliver(to_carol("summarize the logs for Carol", mention_bot=True))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].text.endswith("summarize the logs for Carol")


def to_the_bot(content: dict[str, Any], kind: str = "text", everyone_listed: bool = False) -> dict[str, Any]:
    """``@bot …`` in a group, its content as Feishu writes it (``everyone_listed``: "@所有人" in
    ``mentions`` too)."""
    event = message_event("", mention_bot=True, **GROUP)
    message = event["event"]["message"]
    message.update(message_type=kind, content=json.dumps(content))
    if everyone_listed:
        message["mentions"].append(EVERYONE)
    return event


def repeat_with_a_ping(turn: Turn) -> TurnOutput:
    """An agent that repeats what it read, and tries to ping everyone itself."""
    return TurnOutput(replies=[f'{turn.text} <at user_id="all"></at> <at id=all></at>'])


@pytest.mark.parametrize(
    ("written", "listed", "read"),
    [
        ("@_user_1 提醒 @_all 周五前填表", False, "提醒 @所有人 周五前填表"),
        ("@_user_1 remind @_all to fill in the form", True, "remind @all to fill in the form"),
    ],
)
async def test_everyone_mentioned_reaches_the_agent_as_everyone_and_pings_no_one_back(
    make_bot, written, listed, read
):
    bot = await make_bot(ScriptedRunner(repeat_with_a_ping))
    await bot.deliver(to_the_bot({"text": written}, everyone_listed=listed))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == [read]
    [reply] = [text_of(card) for card in bot.api.shown() if read in text_of(card)]
    assert "<at" not in reply and "_all" not in reply, reply  # the tags shown as text, not pings


async def test_everyone_mentioned_in_rich_text_reaches_the_agent_as_everyone(make_bot):
    bot = await make_bot(ScriptedRunner())
    paragraphs = [
        [
            {"tag": "at", "user_id": "@_user_1", "user_name": "clarigate", "style": []},
            {"tag": "text", "text": " 提醒 ", "style": []},
            {"tag": "at", "user_id": "@_all", "user_name": "所有人", "style": []},
            {"tag": "text", "text": " 周五前填表", "style": []},
        ]
    ]
    await bot.deliver(to_the_bot({"title": "", "content": paragraphs}, kind="post"))
    await bot.gateway.drain()
    assert [c.text for c in bot.runner.calls] == ["提醒 @所有人 周五前填表"]


async def test_an_announcement_to_everyone_in_the_bots_thread_is_not_taken_for_the_bot(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    question_id, _ = await ask(
        bot, "deploy it", user="ou_bob", message_id="om_root", mention_bot=True, **GROUP
    )

    announcement = message_event("", user="ou_alice", root_id="om_root", **GROUP)
    announcement["event"]["message"]["content"] = json.dumps({"text": "@_all 周五团建，请大家报名"})
    await bot.deliver(announcement)
    await bot.gateway.drain()
    assert len(bot.runner.calls) == 1  # said to everyone in the thread, not to the bot
    assert is_interactive(bot.api.cards[question_id])
