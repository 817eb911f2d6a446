"""On a LangGraph server (``langgraph dev``): a Cancel or a new message never resumes a typed
interrupt asked with a JSON Schema dict (``booking``, which the server passes any value through)
with a declined answer the schema does not take. No run resumes it: a Cancel closes the question
(the person is told the task stopped; no replica reports it open again) and a new message runs
over it."""

from __future__ import annotations

from typing import Any

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.runners.server_supersede import SUPERSEDED_BY_KEY
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.process import LangGraphServer

STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)


def _runner(server: LangGraphServer) -> LangGraphServerRunner:
    return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id="booking"), bot_id="bot-1")


async def _runs(runner: LangGraphServerRunner, thread_id: str) -> list[dict[str, Any]]:
    return list(await runner._client.runs.list(server_thread_id(thread_id), limit=20))


async def test_cancel_on_the_server_closes_a_question_whose_schema_refuses_it_without_a_run(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    runner = _runner(langgraph_server)
    other = _runner(langgraph_server)
    try:
        gateway, chat = await make_gateway(MemoryStore("lg-declines-cancel"), runner)
        await chat.say("book a trip", chat="cancel")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        thread_id = await gateway.store.thread_for_chat(chat.conversation("cancel").thread_key, 3600)
        runs = len(await _runs(runner, thread_id))

        await chat.cancel()
        await gateway.drain(timeout=30)
        assert chat.texts() == [STOPPED] and not chat.of_kind("error")
        assert len(await _runs(runner, thread_id)) == runs  # never resumed with the declined payload
        assert await runner.pending_request(thread_id) is None
        assert await other.pending_request(thread_id) is None  # nor by another replica

        await chat.say("book a trip for Ada", chat="cancel")  # runs over the closed question
        await gateway.drain(timeout=30)
        assert chat.last_request().request.request_id != asked.request_id
        assert not [r for r in await _runs(runner, thread_id) if r["status"] == "error"]
    finally:
        await runner.aclose()
        await other.aclose()


async def test_a_new_message_on_the_server_runs_over_a_question_whose_schema_refuses_its_text(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    runner = _runner(langgraph_server)
    try:
        gateway, chat = await make_gateway(MemoryStore("lg-declines-new"), runner)
        await chat.say("book a trip", chat="new")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        await chat.say("actually, what time is it?", chat="new")
        await gateway.drain(timeout=30)
        thread_id = await gateway.store.thread_for_chat(chat.conversation("new").thread_key, 3600)
        runs = await _runs(runner, thread_id)
    finally:
        await runner.aclose()
    assert not [r for r in runs if SUPERSEDED_BY_KEY in (r.get("metadata") or {})]  # nothing resumed it
    assert [r["status"] for r in runs] == ["success", "success"]  # each message's run, asking: no other
    assert chat.last_request().request.request_id != asked.request_id and not chat.of_kind("error")
