"""A photo or file sent while a question is open reaches the agent: with a typed answer it goes
with the answer; alone it is no typed answer, so it runs as a request, the question closed."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import Attachment

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
SHOT = Attachment(kind="image", name="error.png", mime_type="image/png", size=len(PNG), ref="f1")

FREE_TEXT = HumanInputRequest(
    request_id="clarification:shot",
    tool_call_id="shot",
    clarification_type="missing_info",
    question="Which error do you see? A screenshot helps.",
    input_mode="free_text",
)


def script(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "it crashes on start":
        return asking(FREE_TEXT)
    if turn.response is None and turn.text == "which build?":
        return asking(choice_request("Which build?", ["Nightly", "Stable"]))
    return TurnOutput(replies=["thanks"])


async def asked_then(store, make_gateway, request: str, text: str):
    """The scripted agent asked on ``request``; the person sent ``text`` with the screenshot.
    What the agent was given, and what the person was told."""
    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    chat.files["f1"] = PNG
    for said, attachments in ((request, []), (text, [SHOT])):
        await chat.say(said, attachments=attachments)
        await gateway.drain()
    return runner.calls, chat.texts()


async def test_a_typed_answer_with_a_screenshot_brings_it_to_the_agent(store, make_gateway):
    calls, _ = await asked_then(store, make_gateway, "it crashes on start", "this one")

    answer = calls[-1]
    assert answer.response is not None and answer.response.value == "this one"
    assert [image.data for image in answer.images] == [PNG]
    assert "(attached: error.png, image/png" in answer.text


async def test_an_option_typed_with_a_file_brings_the_file_too(store, make_gateway):
    calls, _ = await asked_then(store, make_gateway, "which build?", "2")

    answer = calls[-1]
    assert answer.response is not None and answer.response.option_id == "option-2"
    assert len(answer.images) == 1


async def test_a_screenshot_alone_runs_as_a_request_and_closes_the_question(store, make_gateway):
    calls, told = await asked_then(store, make_gateway, "it crashes on start", "")

    assert len(calls) == 2  # nothing lost: the agent has the screenshot
    request = calls[-1]
    assert request.response is None and [image.data for image in request.images] == [PNG]
    assert not any("Type your answer" in text for text in told)
    assert await store.pending_for_thread(request.thread_id) is None  # the question closed
