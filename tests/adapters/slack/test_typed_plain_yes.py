"""A plain "yes" typed on Slack to a risk confirmation goes through the core's typed
confirmation: it picks the one go-ahead option and asks for "confirm", never runs as a request."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.protocol import HumanInputRequest, Option

from .conftest import MakeWorld


def wipe() -> HumanInputRequest:
    labels = ["Keep them", "Delete them"]
    return HumanInputRequest(
        request_id="clarification:wipe",
        tool_call_id="wipe",
        clarification_type="risk_confirmation",
        question="Delete the 3 prod tables?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)],
    )


def script(turn: Turn):
    if turn.response is None and turn.text == "tidy up":
        return asking(wipe())
    return ScriptedRunner().script(turn)


async def test_a_typed_yes_asks_for_confirm_and_runs_nothing(make_world: MakeWorld):
    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("tidy up")
    await world.settle()
    question = world.fake.posted()

    await world.user.dm("yes")
    await world.settle()
    assert len(runner.calls) == 1  # not run as the request "yes"
    said = world.fake.last_shown()["text"]
    assert said.startswith("Reply “confirm” to go ahead with “Delete them”"), said
    assert world.fake.edits(question["ts"]) == []  # the question is still open

    await world.user.dm("confirm")
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == ["Delete them"]
