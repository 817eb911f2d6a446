"""A request asked for explicitly (``InboundMessage.new_request``: Telegram's ``/ask …``) is never
the typed answer to the thread's open question: the question closes as "sent a new message
instead" and the words run as a request, whatever the question takes (before, a free-text
question took them as its answer, so the agent read "my answer is: summarize the logs"). Text
typed without it still answers as before."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, text_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import InboundMessage, Sender
from clarigate.gateway.store.base import Store

QUESTIONS = [text_request("Which log file?"), choice_request("Which log file?", ["app.log", "db.log"])]


def asks(request: HumanInputRequest):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text == "check the logs":
            return asking(request)
        return TurnOutput(replies=[f"ran with: {turn.response.value if turn.response else turn.text}"])

    return script


async def ask_explicitly(gateway, chat, text: str) -> None:
    """What an adapter hands the core for ``/ask <text>``: the words, marked as a new request."""
    message = InboundMessage(
        conversation=chat.conversation(), sender=Sender(user_id="u1"), text=text, event_id="ask-1"
    )
    await gateway.accept(message.model_copy(update={"new_request": True}))
    await gateway.drain()


@pytest.mark.parametrize("question", QUESTIONS, ids=["text", "choice"])
async def test_an_explicit_request_closes_the_open_question_and_runs_as_a_request(
    store: Store, make_gateway, question: HumanInputRequest
):
    runner = ScriptedRunner(asks(question))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("check the logs")
    await gateway.drain()

    await ask_explicitly(gateway, chat, "summarize the logs")
    ran = runner.calls[-1]
    assert ran.response is None and ran.text == "summarize the logs"
    assert chat.texts()[-1] == "ran with: summarize the logs"
    (closed,) = chat.closed()
    assert closed.view.response is not None and closed.view.response.reason == "superseded"
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view is not None and view.status != "pending"


async def test_plain_text_still_answers_a_free_text_question(store: Store, make_gateway):
    runner = ScriptedRunner(asks(QUESTIONS[0]))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("check the logs")
    await gateway.drain()

    await chat.reply("summarize the logs")
    await gateway.drain()
    ran = runner.calls[-1]
    assert ran.response is not None and ran.response.response_kind == "text"
    assert ran.response.value == "summarize the logs"
