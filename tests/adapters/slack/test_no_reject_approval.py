"""An approval whose review allows neither reject nor respond (``approve`` and ``edit`` only) on
Slack is turned down like any other: it and its Edit form show a Cancel, which closes it with the
tool not run and the agent told so; in a channel thread someone else's message is not held behind
it: it closes the approval as superseded and runs. The real slack-bolt adapter against the fake
Slack, the real LangGraph agent (scripted model), the store on the real Redis."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from tests.adapters.approval_agent import delete_records_agent, tool_results
from tests.agent import user_graphs
from tests.conftest import RedisStoreFactory

from .conftest import MakeWorld


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit"], "Finished: {last_user}", closings=3)
    yield made
    await made.aclose()


def _buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (e["text"]["text"], e["action_id"])
        for b in message["blocks"]
        for e in b.get("elements", [])
        if "action_id" in e
    ]


async def test_its_cancel_turns_the_call_down_and_the_agent_goes_on(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    await world.user.dm("clean up the users table")
    await world.settle()
    question = world.fake.posted()
    assert _buttons(question) == [
        ("Approve", "clarigate:o1"),
        ("Edit", "clarigate:o2"),
        ("Cancel", "clarigate:decline"),
    ]

    await world.user.click(question, "clarigate:decline")
    await world.settle()
    assert world.fake.of("chat.postEphemeral") == []
    closed = json.dumps(world.fake.edits(question["ts"])[-1]["blocks"], ensure_ascii=False)
    assert "✖ Cancelled by <@U1>" in closed
    assert user_graphs.RAN == []  # the tool never ran
    assert await tool_results(runner) == [catalog.text("approval_declined")]  # what the model read
    assert world.fake.last_shown()["text"] == "Finished: clean up the users table"


async def test_its_edit_form_has_a_cancel_too(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    await world.user.dm("clean up the users table")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:o2")  # Edit
    await world.settle()
    form = world.fake.posted()
    assert "Edit the arguments of delete_records" in json.dumps(form["blocks"])
    assert _buttons(form) == [("Fill in", "clarigate:form"), ("Cancel", "clarigate:decline")]

    await world.user.click(form, "clarigate:decline")
    await world.settle()
    assert user_graphs.RAN == [] and await tool_results(runner) == [catalog.text("approval_declined")]
    assert world.fake.last_shown()["text"] == "Finished: clean up the users table"


async def test_in_a_channel_thread_someone_elses_message_runs_over_it(
    redis_stores: RedisStoreFactory, make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner, store=redis_stores())
    _, ts = await world.user.mention("clean up the users table", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.mention("cancel", user="U2", thread_ts=ts)  # "@bot cancel": not U2's question
    await world.settle()
    refused = catalog.text("cancel_not_yours", who="<@U1>")
    notes = world.fake.of("chat.postEphemeral")
    assert [(n["user"], n.get("thread_ts"), n["text"]) for n in notes] == [("U2", ts, refused)]
    assert world.fake.edits(question["ts"]) == []  # still open for U1

    await world.user.mention("what is on today", user="U2", thread_ts=ts)
    await world.settle()
    closed = json.dumps(world.fake.edits(question["ts"])[-1]["blocks"], ensure_ascii=False)
    assert "✖ Closed: <@U2> sent a new message instead" in closed
    assert user_graphs.RAN == []  # nobody approved it: it never ran
    assert await tool_results(runner) == [catalog.text("approval_superseded")]
    assert world.fake.last_shown()["text"].endswith("what is on today")  # U2's request was answered
    assert len(world.fake.of("chat.postEphemeral")) == 1  # no note held U2's message back
