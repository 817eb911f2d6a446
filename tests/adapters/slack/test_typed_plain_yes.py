"""A plain "yes" typed on Slack to a risk confirmation goes through the core's typed
confirmation: it picks the one go-ahead option and asks for "confirm", never runs as a request."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from tests.gateway.flow.test_typed_plain_yes import risk

from .conftest import MakeWorld


def script(turn: Turn):
    if turn.response is None and turn.text == "tidy up":
        return asking(risk(["Keep them", "Delete them"]))
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
