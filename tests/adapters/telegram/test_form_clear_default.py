"""An optional field that came with a default can be emptied in the wizard ("⌫ Clear"): the step,
the summary, the answered message and the agent all see it empty, not its default again.
Real python-telegram-bot against the fake Bot API, a scripted agent."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField

from .harness import message_update
from .test_form_details import Form

DEFAULTED = form_request(
    "Set up the deployment",
    [
        FormField(name="region", label="Region", type="text", default="eu-west-1"),
        FormField(name="replicas", label="Replicas", type="number", default=3),
    ],
    request_id="clarification:form-defaults",
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(DEFAULTED)
    return TurnOutput(replies=[f"Configured: {turn.response.values}"])


async def test_clear_empties_an_optional_field_that_showed_a_default(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    form = Form(tg, next(c for c in tg.api.of("sendMessage") if c.markup).result["message_id"])
    await form.tap("form")
    assert "1/2 · Region" in form.text and "→ eu-west-1" in form.text
    assert "⌫ Clear" in form.labels and "Keep ▶" in form.labels

    await form.tap("c")  # ⌫ Clear
    assert "1/2 · Region" in form.text and "eu-west-1" not in form.text and "→ —" in form.text
    assert "⌫ Clear" not in form.labels and {"Keep ▶", "Skip ▶"} <= set(form.labels)
    await form.tap("k")  # Skip: go on with it empty
    assert "2/2 · Replicas" in form.text
    await form.tap("K")  # Keep the other default
    assert "• Region: —" in form.text and "• Replicas: 3" in form.text

    await form.tap("S")  # Submit
    answer = runner.calls[-1].response
    assert answer is not None and answer.values == {"replicas": 3}
    assert "eu-west-1" not in answer.value and "eu-west-1" not in runner.calls[-1].text
    assert "✅ Answered by Alice" in form.text and "eu-west-1" not in form.text


async def test_keep_after_clear_brings_the_default_back(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    form = Form(tg, next(c for c in tg.api.of("sendMessage") if c.markup).result["message_id"])
    await form.tap("form")
    await form.tap("c")
    await form.tap("K")  # changed their mind: the default again
    await form.tap("K")
    assert "• Region: eu-west-1" in form.text
    await form.tap("S")
    assert runner.calls[-1].response.values == {"region": "eu-west-1", "replicas": 3}
