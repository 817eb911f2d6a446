"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Slack: no Cancel is offered on it nor on its Edit form, a forged Cancel changes nothing, and in a
channel thread someone else's message is told privately that only the asker can answer it while
the approval stays theirs. The real slack-bolt adapter against the fake Slack, the real
LangGraph agent (scripted model), the store on the real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent
from tests.agent import user_graphs
from tests.conftest import RedisStoreFactory

from .conftest import MakeWorld

ANSWER_FIRST = catalog.text("approval_answer_first", new="/clarigate new")


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}")
    yield made
    await made.aclose()


def _buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (e["text"]["text"], e["action_id"])
        for b in message["blocks"]
        for e in b.get("elements", [])
        if "action_id" in e
    ]


def _forged_cancel(world: Any, question: dict[str, Any], user: str = "U1") -> dict[str, Any]:
    """A click on a Cancel the question does not show: its Approve click, named the Cancel."""
    payload = world.user.click_payload(question, "clarigate:o1", user)
    token = payload["actions"][0]["value"].split("|")[0]
    payload["actions"][0].update(action_id="clarigate:decline", value=f"{token}|decline")
    return payload


async def test_no_cancel_is_offered_and_a_forged_one_changes_nothing(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    await world.user.dm("clean up the users table")
    await world.settle()
    question = world.fake.posted()
    assert _buttons(question) == [("Approve", "clarigate:o1"), ("Edit", "clarigate:o2")]

    await world.user.interact(_forged_cancel(world, question))
    await world.settle()
    assert [n["text"] for n in world.fake.of("chat.postEphemeral")] == [ANSWER_FIRST]
    assert world.fake.edits(question["ts"]) == [] and user_graphs.RAN == []  # still open

    await world.user.click(question, "clarigate:o2")  # Edit: its form cannot be turned down either
    await world.settle()
    form = world.fake.posted()
    assert "Edit the arguments of delete_records" in json.dumps(form["blocks"])
    assert _buttons(form) == [("Fill in", "clarigate:form")]
    assert user_graphs.RAN == []


async def test_in_a_channel_thread_someone_elses_message_leaves_it_to_its_asker(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    _, ts = await world.user.mention("clean up the users table", user="U1")
    await world.settle()
    question = world.fake.posted()
    shown = len(world.fake.shown())

    await world.user.mention("what is on today", user="U2", thread_ts=ts)
    await world.user.mention("cancel", user="U2", thread_ts=ts)  # "@bot cancel" in the thread
    await world.settle()
    # in a channel thread the way out is a mention: Slack takes no slash command in a thread
    only_u1 = catalog.text("approval_only_asker", who="<@U1>", new="@clarigate new")
    notes = world.fake.of("chat.postEphemeral")
    assert [(n["user"], n.get("thread_ts"), n["text"]) for n in notes] == [("U2", ts, only_u1)] * 2
    assert len(world.fake.shown()) == shown  # nothing said to the channel
    assert world.fake.edits(question["ts"]) == [] and user_graphs.RAN == []

    await world.user.click(question, "clarigate:o1", user="U1")  # the approval is still U1's
    await world.settle()
    assert user_graphs.RAN == ["delete users 5"]
    # the agent never read U2's words: the last person's message it saw is U1's
    assert world.fake.last_shown()["text"] == "Finished: clean up the users table"


async def test_in_a_channel_thread_its_asker_is_told_the_way_out_as_typed_there(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    _, ts = await world.user.mention("clean up the users table", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.mention("cancel", user="U1", thread_ts=ts)  # "@bot cancel": /cancel held
    await world.user.mention("what is on today", user="U1", thread_ts=ts)  # a message held
    await world.settle()
    in_channel = catalog.text("approval_answer_first", new="@clarigate new")
    replies = [m for m in world.fake.of("chat.postMessage") if m.get("thread_ts") == ts][-2:]
    assert [m["text"] for m in replies] == [in_channel] * 2
    assert world.fake.edits(question["ts"]) == [] and user_graphs.RAN == []
