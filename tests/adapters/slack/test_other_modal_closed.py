"""The "Other…" modal closed without a submit: Slack says so (``view_closed``, for a view opened
with ``notify_on_close``), and the person's next message is a new message again, not the
question's answer; the question stays open with its buttons. The real slack-bolt adapter against
the fake Slack, the real core, on both stores."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.answering import answering_key
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import RedisStoreFactory

from .conftest import MakeWorld, SlackWorld
from .fake_slack import TEAM_ID

RID = "clarification:call-db"
QUESTION = choice_request("Which database?", ["Postgres", "MySQL"], request_id=RID)


def _runner() -> ScriptedRunner:
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "store data":
            return asking(QUESTION)
        return TurnOutput(replies=["ok"])

    return ScriptedRunner(script)


def view_closed(view: dict[str, Any], user: str = "U1") -> dict[str, Any]:
    """The ``view_closed`` payload Slack sends when a person closes a modal opened with ``view``
    (Slack's reference, "View interaction payloads": type, team, user, view, api_app_id,
    is_cleared false for a modal the person closed themselves)."""
    shown = {**view, "id": "V0MODAL", "hash": "h1", "team_id": TEAM_ID, "state": {"values": {}}}
    return {
        "type": "view_closed",
        "team": {"id": TEAM_ID, "domain": "test"},
        "user": {"id": user, "username": user.lower(), "name": user.lower(), "team_id": TEAM_ID},
        "api_app_id": "A0APP",
        "token": "legacy",
        "view": shown,
        "is_cleared": False,
    }


@pytest.fixture(params=["memory", "redis"])
def store(request: pytest.FixtureRequest, redis_stores: RedisStoreFactory) -> Any:
    return MemoryStore("test-other-closed") if request.param == "memory" else redis_stores()


async def _other_closed(world: SlackWorld) -> dict[str, Any]:
    """Ask the question in a DM, pick "Other…", close its modal unused; the question message."""
    await world.user.dm("store data")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:other")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    assert modal["notify_on_close"] is True  # else Slack never says the modal was closed
    assert await world.gateway.state.get_json(answering_key(RID, "U1")) == 1  # typing its answer
    response = await world.user.interact(view_closed(modal))
    assert response.status_code == 200
    await world.settle()
    return question


async def test_the_next_message_after_closing_the_other_modal_is_a_new_message(
    make_world: MakeWorld, store: Any
) -> None:
    runner = _runner()
    world = await make_world(runner, store=store)
    question = await _other_closed(world)
    assert await store.get_json(answering_key(RID, "U1")) is None  # the window is over at once

    await world.user.dm("what is on the calendar today?")
    await world.settle()

    last = runner.calls[-1]
    assert last.response is None and last.text == "what is on the calendar today?"  # a request
    closed = json.dumps(world.fake.edits(question["ts"])[-1]["blocks"], ensure_ascii=False)
    assert "sent a new message instead" in closed and "calendar" not in closed


async def test_the_question_stays_open_with_its_buttons_after_the_modal_is_closed(
    make_world: MakeWorld, store: Any
) -> None:
    runner = _runner()
    world = await make_world(runner, store=store)
    question = await _other_closed(world)

    assert world.fake.edits(question["ts"]) == []  # the message and its buttons as they were
    record = await store.get_pending(RID)
    assert record is not None and record.status == "pending"

    await world.user.click(question, "clarigate:o2")  # its buttons still answer it
    await world.settle()
    answer = runner.calls[-1].response
    assert answer is not None and answer.option_id == "option-2"
