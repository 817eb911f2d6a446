"""A photo or file sent at a step of the step-by-step form: with a caption the caption is read as a
typed message (it fills the step) and the file goes with the form's answer; sent alone it is a new
message (README), and the person is told their form closed without its values being sent."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .harness import message_update
from .test_wizard import Wizard, script

SIZING = {  # a Bot API Document
    "file_id": "doc-sizing",
    "file_unique_id": "udoc-sizing",
    "file_name": "sizing.txt",
    "mime_type": "text/plain",
    "file_size": 42,
}
VOICE = {"file_id": "voice-1", "file_unique_id": "uvoice-1", "duration": 3, "mime_type": "audio/ogg"}
DROPPED = "Your form was closed and the values you filled in were not sent"


async def at_replicas(bench):
    """The scripted agent asked FORM; Alice filled steps 1–3 and sees "4/6 · Replicas"."""
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    await tg.deliver(message_update("deploy"))
    w = Wizard(tg)
    for tap in ("form", "s2", "d", "y"):
        await w.tap(tap)
    assert "4/6 · Replicas" in w.shown.params["text"]
    return runner, tg, w


async def test_a_file_captioned_with_the_value_fills_the_step_and_goes_with_the_answer(bench):
    runner, tg, w = await at_replicas(bench)
    await tg.deliver(message_update(None, caption="3", document=SIZING))

    shown = w.shown.params["text"]
    assert "5/6 · Deadline" in shown and "Closed" not in shown
    assert len(runner.calls) == 1  # no new request: the agent still waits for the form
    await w.type("2026-12-01")
    await w.tap("k")  # Notes: skipped
    await w.tap("S")

    answer = runner.calls[-1]
    assert answer.response is not None and answer.response.response_kind == "form"
    assert answer.response.values["replicas"] == 3
    assert "sizing.txt" in answer.text  # the file went with the answer
    assert "✅ Answered by Alice" in w.shown.params["text"]


async def test_a_voice_note_alone_at_a_step_is_a_new_message_and_says_the_form_closed(bench):
    runner, tg, w = await at_replicas(bench)
    tg.new_calls()
    await tg.deliver(message_update(None, voice=VOICE))

    request = runner.calls[-1]
    assert request.response is None and "voice" in request.text.lower()  # a new message (README)
    said = [c.params["text"] for c in tg.new_calls() if c.method == "sendMessage"]
    assert any(DROPPED in text for text in said), said
    # the form takes no more values: typing goes to the agent
    await w.type("3")
    assert runner.calls[-1].text == "3" and runner.calls[-1].response is None
