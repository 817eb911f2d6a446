"""Typed interrupts (``interrupt(value, response_schema=…)``) on a real LangGraph server
(``langgraph dev``): the schema travels in the thread's state and is asked as a form; an answer
breaking a bound is asked again before any run, one the graph's own model rejects (the run ends
in a validation error, the interrupt stays pending) is asked again with the graph's error, a
Cancel the graph's model refuses closes the question (never asked again, the person told the task
stopped, the thread no longer reporting it open), and the graph is resumed with the schema's types.
A validation error of the graph's own model after a good answer is a failure, as in process: the
person is not told the answer was refused, nor asked again."""

from __future__ import annotations

import json

from clarigate.agent.interrupt_kinds import Asked
from clarigate.agent.protocol import catalog
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.typed_graphs import TRIP

from ..langgraph_server.process import LangGraphServer

GOOD = {
    "name": "Ada",
    "guests": "4",
    "budget": "12.5",
    "vip": True,
    "color": "blue",
    "extras": ["red", "blue"],
    "day": "2026-12-01",
}

#: What the person who dismissed the typed question is told once its run is over: it cannot go on
#: (its message already says "✖ Cancelled by …").
STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)


def _runner(server: LangGraphServer, graph: str) -> LangGraphServerRunner:
    return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph), bot_id="bot-1")


async def test_a_typed_interrupt_on_the_server_is_a_form_resumed_with_the_schemas_types(
    langgraph_server, make_gateway
):
    runner = _runner(langgraph_server, "booking")
    gateway, chat = await make_gateway(MemoryStore("lg-typed"), runner)
    await chat.say("book a trip")
    await gateway.drain(timeout=30)
    request = chat.last_request().request
    assert request.input_mode == "form" and request.question == "Book the trip"
    assert [f.type for f in request.fields] == [
        "text", "number", "number", "checkbox", "select", "select", "multi_select", "date",
    ]  # fmt: skip

    outcome = await chat.submit({**GOOD, "guests": "20"})
    assert outcome.status is AnswerStatus.ACCEPTED
    await gateway.drain(timeout=30)
    again = chat.last_request().request
    assert "Guests: Must be at most 10" in (again.context or "")

    await chat.submit(GOOD)
    await gateway.drain(timeout=30)
    reply = chat.texts()[-1]
    assert reply.startswith("Booked for Ada: ")
    resumed = json.loads(reply.split(": ", 1)[1])
    assert resumed == {**GOOD, "guests": 4, "budget": 12.5, "size": "m"}
    assert [type(resumed[k]).__name__ for k in ("guests", "budget", "vip")] == ["int", "float", "bool"]
    await runner.aclose()


async def test_an_answer_the_graphs_model_rejects_is_asked_again_with_its_error(
    langgraph_server, make_gateway
):
    runner = _runner(langgraph_server, "checked_booking")
    gateway, chat = await make_gateway(MemoryStore("lg-typed-checked"), runner)
    await chat.say("book a trip", chat="checked")
    await gateway.drain(timeout=30)
    first = chat.last_request().request

    assert first.fields[1].default == 2  # Guests: the schema's default
    await chat.submit({**GOOD, "name": "Ada1", "guests": ""})  # a digit: only the graph knows
    await gateway.drain(timeout=30)
    again = chat.last_request().request
    assert again.request_id != first.request_id
    assert "The answer was not accepted: Name: Value error, a name has no digits" in (again.context or "")
    assert again.fields[0].default == "Ada1"
    assert again.fields[1].default is None  # emptied, so empty: not the default again
    assert not any("error" in text.lower() for text in chat.texts())

    await chat.submit({**GOOD, "name": "Ada"})
    await gateway.drain(timeout=30)
    assert chat.texts()[-1] == "Booked for Ada."
    await runner.aclose()


async def test_cancel_on_a_typed_question_whose_model_refuses_the_decline_closes_it(
    langgraph_server, make_gateway
):
    runner = _runner(langgraph_server, "checked_booking")
    gateway, chat = await make_gateway(MemoryStore("lg-typed-cancel"), runner)
    await chat.say("book a trip", chat="cancel")
    await gateway.drain(timeout=30)
    [asked] = chat.requests()

    thread_id = await gateway.store.thread_for_chat(chat.conversation("cancel").thread_key, 3600)
    assert (await runner.pending_request(thread_id)).request_id == asked.request.request_id

    outcome = await chat.cancel()
    assert outcome.status is AnswerStatus.ACCEPTED and outcome.answered_line == "✖ Cancelled by u1"
    await gateway.drain(timeout=30)
    assert chat.requests() == [asked]  # not asked again: the person is not trapped
    assert not chat.of_kind("error")
    assert chat.texts() == [STOPPED]  # never "I will go on without the answer": it cannot
    state = await runner._client.threads.get_state(server_thread_id(thread_id))
    assert [i["id"] for i in state["interrupts"]] == [asked.request.request_id.split(":", 1)[1]]
    # the closed question is not reported as open, by this replica or another (``clarigate chat``)
    assert await runner.pending_request(thread_id) is None
    other = _runner(langgraph_server, "checked_booking")
    assert await other.pending_request(thread_id) is None
    await other.aclose()

    await chat.say("book a trip for Ada", chat="cancel")  # runs as any new message over an interrupt
    await gateway.drain(timeout=30)
    again = chat.last_request().request
    assert again.request_id != asked.request.request_id and not chat.of_kind("error")
    await chat.submit(GOOD)
    await gateway.drain(timeout=30)
    assert chat.texts()[-1] == "Booked for Ada."
    await runner.aclose()


async def test_a_typed_question_too_long_for_a_question_is_shown_in_full_above_it(
    langgraph_server, make_gateway
):
    """A trip of several lines ending in its question: the chat gets the trip in full, then the
    form asking that question; again so when the graph's model rejects the answer."""
    runner = _runner(langgraph_server, "long_booking")
    gateway, chat = await make_gateway(MemoryStore("lg-typed-long"), runner)
    await chat.say("book my trip", chat="long")
    await gateway.drain(timeout=30)
    first = chat.last_request().request
    assert first.input_mode == "form" and first.question == "Who travels, and when?"
    assert first.context == "Shown in full above."
    trip = TRIP.rsplit("\n", 1)[0]
    shown = f"```\n{trip}\n\nWho travels, when, and how.\n```"
    assert chat.texts() == [shown]
    # found again as the turn asked it, its text in full above it (``clarigate chat`` restarted)
    thread_id = await gateway.store.thread_for_chat(chat.conversation("long").thread_key, 3600)
    assert await runner.pending_asked(thread_id) == Asked(first, shown)

    await chat.submit({**GOOD, "name": "Ada1"})  # a digit: only the graph knows
    await gateway.drain(timeout=30)
    again = chat.last_request().request
    assert "a name has no digits" in (again.context or "") and again.request_id != first.request_id
    assert chat.texts() == [shown, shown]

    await chat.submit(GOOD)
    await gateway.drain(timeout=30)
    assert chat.texts()[-1] == "Booked for Ada."
    await runner.aclose()


async def test_a_graphs_own_validation_error_after_a_good_answer_is_a_failure_not_a_refusal(
    langgraph_server, make_gateway
):
    runner = _runner(langgraph_server, "booking_then_own_check")
    gateway, chat = await make_gateway(MemoryStore("lg-typed-own-check"), runner)
    await chat.say("book a trip", chat="own-check")
    await gateway.drain(timeout=30)
    [asked] = chat.requests()

    await chat.submit(GOOD)
    await gateway.drain(timeout=30)
    assert chat.requests() == [asked]  # not asked again over a model the person never saw
    assert chat.texts() == [catalog.text("run_failed", "en")]  # as in process, never "not accepted"
    await runner.aclose()
