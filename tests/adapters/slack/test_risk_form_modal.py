"""A risk confirmation asked as a form on Slack: a decision the person did not make never takes
effect. A field whose default goes ahead (a checkbox shown ticked, a select showing "Drop all":
Submit alone would answer it in one click) opens with nothing picked, as a required input, its hint
naming what the agent proposed; submitted untouched it is refused and the agent gets nothing; picked
by the person, the values go through. A form that is no risk confirmation opens filled in.
The real slack-bolt adapter against the fake Slack, the real core."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from ..unchanged_submissions import slack_state
from .conftest import MakeWorld

FIELDS = [
    {"name": "confirm_delete", "type": "checkbox", "default": True},
    {"name": "mode", "type": "select", "options": ["Drop all", "Keep all"], "default": "Drop all"},
]
QUESTION = {"question": "Delete the 3 prod tables?", "fields": FIELDS}
PICK_FIRST = "Choose one: nothing that goes ahead is taken unless you pick it."


def _runner(kind: str) -> ScriptedRunner:
    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        return asking(normalize_request({**QUESTION, "clarification_type": kind}, "call-wipe"))

    return ScriptedRunner(script)


async def _open(world: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    await world.user.dm("tidy up")
    await world.settle()
    await world.user.click(world.fake.posted(), "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    return modal, [b for b in modal["blocks"] if b["type"] == "input"]


def _answers(runner: ScriptedRunner) -> list[Any]:
    return [call.response.values for call in runner.calls if call.response is not None]


async def test_a_risk_forms_go_ahead_defaults_open_unpicked_and_untouched_are_refused(
    make_world: MakeWorld,
) -> None:
    runner = _runner("risk_confirmation")
    world = await make_world(runner)
    modal, (delete, mode) = await _open(world)
    assert delete["element"]["type"] == "radio_buttons" and "initial_option" not in delete["element"]
    assert mode["element"]["type"] == "static_select" and "initial_option" not in mode["element"]
    assert [b.get("optional", False) for b in (delete, mode)] == [False, False]  # Slack requires a pick
    assert delete["hint"]["text"].startswith("Proposed: Yes.")
    assert mode["hint"]["text"].startswith("Proposed: Drop all.")

    response = await world.user.submit(modal, slack_state(modal))  # untouched (Slack's check passed by)
    await world.settle()
    assert response.json() == {
        "response_action": "errors",
        "errors": {"field-1": PICK_FIRST, "field-2": PICK_FIRST},
    }
    assert _answers(runner) == []  # the agent never got "Drop all"

    yes = next(o for o in delete["element"]["options"] if o["text"]["text"] == "Yes")
    drop = next(o for o in mode["element"]["options"] if o["text"]["text"] == "Drop all")
    picked = {
        "field-1": {"value": {"type": "radio_buttons", "selected_option": yes}},
        "field-2": {"value": {"type": "static_select", "selected_option": drop}},
    }
    response = await world.user.submit(modal, picked)
    await world.settle()
    assert response.status_code == 200 and not response.content  # accepted, the modal closes
    assert _answers(runner) == [{"confirm_delete": True, "mode": "Drop all"}]


@pytest.mark.parametrize("kind", ["missing_info", "approach_choice"])
async def test_a_form_that_is_no_risk_confirmation_opens_filled_in(make_world: MakeWorld, kind: str) -> None:
    runner = _runner(kind)
    world = await make_world(runner)
    modal, (delete, mode) = await _open(world)
    assert delete["element"]["type"] == "checkboxes" and delete["element"]["initial_options"]
    assert mode["element"]["initial_option"]["text"]["text"] == "Drop all"

    await world.user.submit(modal, slack_state(modal))
    await world.settle()
    assert _answers(runner) == [{"confirm_delete": True, "mode": "Drop all"}]
