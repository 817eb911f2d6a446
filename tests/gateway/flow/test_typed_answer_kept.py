"""A typed answer met by the agent being away is kept and runs as the answer once it is back,
as a clicked one does: never as its bare text, a new request, once its question is closed."""

from __future__ import annotations

import time

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest, Option
from clarigate.gateway.runners.base import AgentUnavailable

from .test_answer_attachments import PNG, SHOT  # a screenshot and its bytes


class AwayFor:
    """The scripted agent asks which database; while ``until`` has not passed, it is away."""

    def __init__(self) -> None:
        self.until = 0.0

    def __call__(self, turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "which db?":
            return asking(choice_request("Which database?", ["PostgreSQL", "SQLite"]))
        if time.monotonic() < self.until:
            raise AgentUnavailable("the checkpointer is down")
        said = turn.response.value if turn.response is not None else f"a new request: {turn.text}"
        return TurnOutput(replies=[f"Got {said}"])


async def test_a_typed_answer_kept_through_an_outage_runs_as_the_answer(store, make_gateway):
    away = AwayFor()
    runner = ScriptedRunner(away)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("which db?")
    await gateway.drain()
    away.until = time.monotonic() + 8  # longer than the run's wait in place: the job is kept for later
    await chat.say("2")
    await gateway.drain(timeout=90)

    answered = [call for call in runner.calls if call.text != "which db?"]
    assert {call.response.value for call in answered if call.response is not None} == {"SQLite"}
    assert all(call.response is not None for call in answered)  # "2" never ran as a request
    assert chat.texts()[-1] == "Got SQLite"
    assert not any("a new request" in text for text in chat.texts())


WIPE = HumanInputRequest(
    request_id="clarification:wipe",
    tool_call_id="wipe",
    clarification_type="risk_confirmation",
    question="Delete the test data?",
    input_mode="choice_with_other",
    options=[
        Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(("Keep it", "Delete"), 1)
    ],
)


async def test_a_confirmed_pick_kept_through_an_outage_keeps_its_photo(store, make_gateway):
    away = AwayFor()

    def script(turn: Turn) -> TurnOutput:
        if turn.response is None:
            return asking(WIPE)
        return away(turn)

    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    chat.files["f1"] = PNG
    await chat.say("clean up")
    await gateway.drain()
    await chat.say("2", attachments=[SHOT])  # the go-ahead option: "confirm" is asked for
    await gateway.drain()
    away.until = time.monotonic() + 8  # longer than the run's wait in place: the job is kept for later
    await chat.say("confirm")
    await gateway.drain(timeout=90)

    answer = runner.calls[-1]
    assert answer.response is not None and answer.response.value == "Delete"
    assert [image.data for image in answer.images] == [PNG]  # the pick's photo, after the outage too
    assert chat.texts()[-1] == "Got Delete"
