"""A plain "no" typed on Slack to a risk confirmation goes through the core: it answers the one
safe option at once (the question shown as answered), never runs as the request "no"."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from tests.gateway.flow.test_typed_plain_yes import risk

from .conftest import MakeWorld


def script(turn: Turn):
    if turn.response is None and turn.text == "tidy up":
        return asking(risk(["Yes, delete it", "No, keep it"]))
    return ScriptedRunner().script(turn)


async def test_a_typed_no_answers_the_safe_option(make_world: MakeWorld):
    runner = ScriptedRunner(script)
    world = await make_world(runner)
    await world.user.dm("tidy up")
    await world.settle()
    question = world.fake.posted()

    await world.user.dm("no")
    await world.settle()
    assert [c.text for c in runner.calls if c.response is None] == ["tidy up"]  # no request "no"
    assert [c.response.value for c in runner.calls if c.response] == ["No, keep it"]
    assert world.fake.edits(question["ts"]) != []  # the question's message shows it answered
