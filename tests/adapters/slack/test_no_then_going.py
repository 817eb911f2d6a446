"""A risk confirmation's "No, drop it now" goes ahead as much as its "Yes, back up first": on Slack
both buttons are red and behind the "Are you sure?" dialog, and typing "No, drop it now" asks for
"confirm" before the agent hears it (before, a leading "no" read as the safe choice: one click)."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from tests.gateway.flow.test_typed_plain_yes import risk

from .conftest import MakeWorld

LABELS = ["Yes, back up first", "No, drop it now"]


def script(turn: Turn):
    if turn.response is None and turn.text == "drop the users table":
        return asking(risk(LABELS))
    return ScriptedRunner().script(turn)


def buttons(message: dict[str, Any]) -> dict[str, dict[str, Any]]:
    elements = [e for b in message["blocks"] if b["type"] == "actions" for e in b["elements"]]
    return {e["text"]["text"]: e for e in elements if e["action_id"].startswith("clarigate:o")}


async def test_both_going_options_are_red_and_ask_before_they_count(make_world: MakeWorld):
    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("drop the users table")
    await world.settle()
    question = world.fake.posted()
    shown = buttons(question)
    assert set(shown) == set(LABELS)
    for label in LABELS:
        assert shown[label]["style"] == "danger", label
        assert shown[label]["confirm"]["title"]["text"] == "Are you sure?", label

    await world.user.dm("No, drop it now")
    await world.settle()
    assert len(runner.calls) == 1  # the agent has not heard it yet
    said = world.fake.last_shown()["text"]
    assert said.startswith("Reply “confirm” to go ahead with “No, drop it now”"), said
    assert world.fake.edits(question["ts"]) == []  # the question is still open

    await world.user.dm("confirm")
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == ["No, drop it now"]
