"""A plain "yes" typed on Telegram to a risk confirmation goes through the core's typed
confirmation: it picks the one go-ahead option and asks for "confirm", never runs as a request."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .harness import message_update
from .test_risk_confirm import answers, script


async def test_a_typed_yes_asks_for_confirm_and_runs_nothing(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("clean up the test data"))
    await tg.deliver(message_update("Yes!"))
    assert len(runner.calls) == 1 and answers(runner) == []  # not run as the request "Yes!"
    said = tg.api.of("sendMessage")[-1].params["text"]
    assert said.startswith("Reply “confirm” to go ahead with “Yes, delete everything”"), said
    await tg.deliver(message_update("confirm"))
    assert answers(runner) == ["Yes, delete everything"]
