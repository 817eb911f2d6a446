"""Through the gateway, in process: a Cancel, ``/cancel`` or a new message instead of an answer
never resumes a typed interrupt whose Pydantic model has a default for every field. LangGraph
rebuilds the model from the resume value and drops the keys it does not name, so the declined
payload would come back as the defaults (``Confirm(guests=2)``): the graph would act on a
decision the person never made. The question is closed instead and the task stops, as for a
model with required fields; a model that names ``response_kind`` still gets the declined payload."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import confirm_graphs

#: What the person who dismissed the question is told once its run is over: it cannot go on.
STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)
#: ``/cancel``'s immediate reply on a graph's own interrupt.
CANCELLED = "✖ Cancelled the question “Book the table?”"  # its "?" ends it: no "."


@asynccontextmanager
async def _graph(make_gateway: Any, graph: str) -> AsyncIterator[tuple[Any, Any, LangGraphRunner]]:
    confirm_graphs.BOOKED.clear()
    settings = AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.confirm_graphs:{graph}")
    runner = LangGraphRunner(settings)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"declines-defaults-{graph}"), runner)
        yield gateway, chat, runner
    finally:
        await runner.aclose()


async def _asked(gateway: Any, chat: Any) -> Any:
    await chat.say("book a table")
    await gateway.drain(timeout=30)
    return chat.last_request().request


async def test_cancel_on_an_all_defaults_model_books_nothing_and_says_the_task_stopped(
    make_gateway: Any,
) -> None:
    async with _graph(make_gateway, "confirm_booking") as (gateway, chat, runner):
        await _asked(gateway, chat)
        await chat.cancel()
        await gateway.drain(timeout=30)
        assert confirm_graphs.BOOKED == []  # never Confirm(guests=2, notify=True)
        assert chat.texts() == [STOPPED]  # never "Booked for 2."
        assert not chat.of_kind("error")
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        assert await runner.pending_request(thread_id) is None  # closed, not reported open again


async def test_the_cancel_command_on_an_all_defaults_model_books_nothing(make_gateway: Any) -> None:
    async with _graph(make_gateway, "confirm_booking") as (gateway, chat, _):
        await _asked(gateway, chat)
        await chat.say("/cancel")
        await gateway.drain(timeout=30)
        assert confirm_graphs.BOOKED == []
        assert chat.texts() == [CANCELLED, STOPPED]


async def test_a_new_message_over_an_all_defaults_model_books_nothing_and_runs(make_gateway: Any) -> None:
    async with _graph(make_gateway, "confirm_booking") as (gateway, chat, _):
        asked = await _asked(gateway, chat)
        await chat.say("actually, what time is it?")
        await gateway.drain(timeout=30)
        assert confirm_graphs.BOOKED == []  # the question is left behind, never answered with defaults
        assert "Booked for 2." not in chat.texts()
        assert chat.last_request().request.request_id != asked.request_id  # the message ran
        assert not chat.of_kind("error")


async def test_cancel_on_an_all_optional_model_is_not_an_empty_answer(make_gateway: Any) -> None:
    async with _graph(make_gateway, "confirm_seat") as (gateway, chat, _):
        await _asked(gateway, chat)
        await chat.cancel()
        await gateway.drain(timeout=30)
        assert confirm_graphs.BOOKED == []  # never SeatChoice(seat=None), as an empty submit is
        assert chat.texts() == [STOPPED]


async def test_an_answer_to_an_all_defaults_model_still_books(make_gateway: Any) -> None:
    async with _graph(make_gateway, "confirm_booking") as (gateway, chat, _):
        await _asked(gateway, chat)
        await chat.submit({"guests": "3", "notify": False})
        await gateway.drain(timeout=30)
        [booked] = confirm_graphs.BOOKED
        assert (booked.guests, booked.notify) == (3, False)
        assert chat.texts() == ["Booked for 3."]


async def test_a_model_naming_response_kind_still_gets_the_declined_payload(make_gateway: Any) -> None:
    async with _graph(make_gateway, "confirm_or_decline") as (gateway, chat, _):
        await _asked(gateway, chat)
        await chat.cancel()
        await gateway.drain(timeout=30)
        assert confirm_graphs.BOOKED == []
        assert chat.texts() == ["Not booked: cancelled."]  # it told the Cancel from an answer


async def test_a_hand_written_dict_schema_still_gets_the_declined_payload(make_gateway: Any) -> None:
    """A plain JSON Schema dict (no ``title``, other keys allowed): LangGraph passes the resume
    value through, so the graph reads the Cancel and the ``/cancel`` as declined."""
    for how in ("button", "/cancel"):
        async with _graph(make_gateway, "note_or_decline") as (gateway, chat, _):
            await _asked(gateway, chat)
            await (chat.cancel() if how == "button" else chat.say("/cancel"))
            await gateway.drain(timeout=30)
            assert confirm_graphs.BOOKED == []
            assert chat.texts()[-1] == "Not booked: cancelled."  # never "The task ... has stopped"
