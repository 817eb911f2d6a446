"""On a LangGraph server (``langgraph dev``), as in process (``test_typed_declines_defaults``): only
the JSON Schema travels, so a Cancel resumes a typed interrupt with the declined payload when the
schema is a hand-written dict (no ``title``: the server passes the value through as it is), never
one made from a Pydantic model whose fields all have defaults (it would come back as them)."""

from __future__ import annotations

from typing import Any

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.process import LangGraphServer

STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)


async def _cancelled(server: LangGraphServer, make_gateway: Any, graph: str) -> tuple[list[str], int]:
    """What the person reads after a Cancel on ``graph``'s question, and the runs it took."""
    runner = LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph), bot_id="bot-1")
    try:
        gateway, chat = await make_gateway(MemoryStore(f"lg-declines-{graph}"), runner)
        await chat.say("book a table")
        await gateway.drain(timeout=30)
        assert chat.last_request().request.question == "Book the table?"
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        runs = server_thread_id(thread_id)
        before = len(list(await runner._client.runs.list(runs, limit=20)))
        await chat.cancel()
        await gateway.drain(timeout=30)
        assert not chat.of_kind("error")
        return chat.texts(), len(list(await runner._client.runs.list(runs, limit=20))) - before
    finally:
        await runner.aclose()


async def test_cancel_on_the_server_resumes_a_hand_written_dict_schema_as_declined(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    texts, runs = await _cancelled(langgraph_server, make_gateway, "note_or_decline")
    assert texts == ["Not booked: cancelled."] and runs == 1  # the graph read the Cancel


async def test_cancel_on_the_server_never_resumes_an_all_defaults_model(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    texts, runs = await _cancelled(langgraph_server, make_gateway, "confirm_booking")
    assert texts == [STOPPED] and runs == 0  # never "Booked for 2."
