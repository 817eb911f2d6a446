"""Edit on Slack keeps what the person did not change: the real slack-bolt adapter against the
fake Slack, the real LangGraph agent (scripted model) and a tool recording its exact arguments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.unchanged_submissions import slack_state
from tests.agent import approval_tools as tools

from .conftest import MakeWorld, SlackWorld


@pytest.fixture(autouse=True)
def _fresh() -> None:
    tools.CALLS.clear()


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    made = tools.approval_runner(tmp_path)
    yield made
    await made.aclose()


def _button(message: dict[str, Any], text: str) -> str:
    """The action id of the button that says ``text``."""
    for block in message["blocks"]:
        for element in block.get("elements", []):
            if "action_id" in element and element.get("text", {}).get("text", "").endswith(text):
                return str(element["action_id"])
    raise AssertionError(f"no {text!r} button")


async def _edit_modal(world: SlackWorld) -> dict[str, Any]:
    """Ask, click Edit, open the form: the modal as Slack received it."""
    await world.user.dm("clean up the test data")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, _button(question, "Edit"))
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    return world.fake.of("views.open")[-1]["view"]


async def test_edit_submitted_unchanged_runs_the_original_call(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    modal = await _edit_modal(world)
    elements = {b["label"]["text"]: b["element"] for b in modal["blocks"] if b["type"] == "input"}
    assert elements["dry_run"]["initial_options"][0]["value"] == "true"  # ticked
    assert elements["limit"]["initial_value"] == "100"
    assert elements["before"]["initial_date"] == "2026-01-31"
    assert json.loads(elements["tags"]["initial_value"]) == ["old", "tmp"]
    response = await world.user.submit(modal, slack_state(modal))
    assert response.status_code == 200
    await world.settle()
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    assert world.fake.last_shown()["text"] == "Finished."


async def test_edit_of_one_field_changes_only_that_argument(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    modal = await _edit_modal(world)
    state = slack_state(modal)
    block = next(b["block_id"] for b in modal["blocks"] if b.get("label", {}).get("text") == "table")
    state[block]["value"]["value"] = "prod_data"
    await world.user.submit(modal, state)
    await world.settle()
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "table": "prod_data"})]


async def test_unticking_dry_run_is_an_edit(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    modal = await _edit_modal(world)
    state = slack_state(modal)
    block = next(b["block_id"] for b in modal["blocks"] if b.get("label", {}).get("text") == "dry_run")
    state[block]["value"]["selected_options"] = []  # what Slack sends for an unticked box
    await world.user.submit(modal, state)
    await world.settle()
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "dry_run": False})]


async def test_reject_never_runs_the_tool(make_world: MakeWorld, runner: Any) -> None:
    world = await make_world(runner)
    await world.user.dm("clean up the test data")
    await world.settle()
    question = world.fake.posted()
    await world.user.click(question, _button(question, "Reject"))
    await world.settle()
    assert tools.CALLS == []
    assert world.fake.last_shown()["text"] == "Finished."
