"""Approvals (``agent.require_approval``) and a user graph's ``interrupt()`` on Slack: the real
slack-bolt adapter against the fake Slack, the real LangGraph agent (scripted model)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.adapters.approval_agent import LONG_QUERY, delete_records_agent, two_calls_agent
from tests.agent import user_graphs

from .conftest import MakeWorld


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit", "reject"], "Finished.")
    yield made
    await made.aclose()


def _buttons(message: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (e["text"]["text"], e["action_id"])
        for b in message["blocks"]
        for e in b.get("elements", [])
        if "action_id" in e
    ]


async def test_approve_by_click_runs_the_tool_once(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("clean up the users table")
    await world.settle()
    question = world.fake.posted()
    assert "delete_records" in json.dumps(question["blocks"])
    assert _buttons(question)[:3] == [
        ("Approve", "clarigate:o1"),
        ("Reject", "clarigate:o2"),
        ("Edit", "clarigate:o3"),
    ]
    assert user_graphs.RAN == []
    await world.user.click(question, "clarigate:o1")
    await world.settle()
    await world.user.click(question, "clarigate:o1")  # a second click answers nothing
    await world.settle()
    assert user_graphs.RAN == ["delete users 5"]
    assert "Answered by <@U1>: Approve" in json.dumps(world.fake.edits(question["ts"])[-1]["blocks"])
    assert world.fake.last_shown()["text"] == "Finished."


async def test_reject_by_click_never_runs_the_tool(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("clean up the users table")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:o2")
    await world.settle()
    assert user_graphs.RAN == []
    assert world.fake.last_shown()["text"] == "Finished."


async def test_edit_through_the_modal_runs_the_edited_call(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("clean up the users table")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:o3")
    await world.settle()
    form = world.fake.posted()
    assert "Edit the arguments of delete_records" in json.dumps(form["blocks"])
    await world.user.click(form, "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    inputs = [b for b in modal["blocks"] if b["type"] == "input"]
    assert [b["label"]["text"] for b in inputs] == ["table", "limit"]  # as the model wrote them
    assert [b["element"]["type"] for b in inputs] == ["plain_text_input", "number_input"]
    response = await world.user.submit(modal, {"field-2": {"value": {"type": "number_input", "value": "2"}}})
    assert response.status_code == 200
    await world.settle()
    assert user_graphs.RAN == ["delete users 2"]


async def test_a_user_graph_interrupt_answered_by_click(make_world: MakeWorld) -> None:
    graph = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:make_graph")
    )
    try:
        world = await make_world(graph)
        await world.user.dm("deploy")
        await world.settle()
        question = world.fake.posted()
        assert "Which region?" in json.dumps(question["blocks"])
        await world.user.click(question, "clarigate:o2")
        await world.settle()
        assert user_graphs.RAN == ["us-east"]
        assert world.fake.last_shown()["text"] == "Deployed to us-east."
    finally:
        await graph.aclose()


async def test_cancel_rejects_the_call_and_the_agent_goes_on(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("clean up the users table")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, "clarigate:decline")
    await world.settle()
    assert user_graphs.RAN == []
    assert world.fake.last_shown()["text"] == "Finished."
    # the interrupted run was resumed with a rejection the model reads
    saver = runner._agent._checkpointer.saver
    latest = [c async for c in saver.alist(None, limit=1)][0]
    results = [m.text for m in latest.checkpoint["channel_values"]["messages"] if m.type == "tool"]
    assert any("The person declined this action." in r for r in results)


def _unescaped(mrkdwn: str) -> str:
    """Text as Slack shows it: its three escapes undone."""
    return mrkdwn.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")


@pytest.mark.parametrize("where", ["dm", "thread"])  # a DM's reply edits "working…"; a thread's streams
async def test_calls_too_long_for_the_approval_reach_the_person_in_full_first(
    make_world: MakeWorld, tmp_path: Path, where: str
) -> None:
    """A long ``run_sql`` and a ``drop_table`` asked at once, one Approve for both: before the
    question the person reads both calls in full, every character as written (no markup taken,
    no mention made), in messages within Slack's limits; the question names both."""
    runner = two_calls_agent(tmp_path)
    try:
        world = await make_world(runner)
        said = "how many active customers do we have?"
        await (world.user.dm(said) if where == "dm" else world.user.mention(said))
        await world.settle()
        *replies, question = world.fake.shown()
        assert len(replies) > 1  # more than one message holds
        assert all(len(m["text"]) <= 4000 for m in [*replies, question])  # Slack's advice; blocks checked
        assert not any("<@U1>" in m["text"] for m in replies)  # shown, not a mention
        code = "".join(_unescaped(m["text"]).removeprefix("```\n").removesuffix("\n```") for m in replies)
        calls = f'run_sql(query={json.dumps(LONG_QUERY)})\ndrop_table(name="customers")'
        assert re.sub(r"\s", "", code) == re.sub(r"\s", "", calls)  # a cut may fall on a space
        asked = _unescaped(json.dumps(question["blocks"], ensure_ascii=False))
        assert "Approve these 2 actions?" in asked and "Every call is shown in full above." in asked
        assert "run_sql(query=" in asked and 'drop_table(name=\\"customers\\")' in asked
        await world.user.click(world.fake.posted(), "clarigate:o1")
        await world.settle()
        assert user_graphs.RAN == [f"run_sql {LONG_QUERY}", "drop_table customers"]
    finally:
        await runner.aclose()
