"""Graphs that pause on static breakpoints (``interrupt_before`` / ``interrupt_after``) asked as
"Continue / Stop", in process and on a LangGraph server; a graph whose state has no ``messages``
is an error at start naming what the gateway needs."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import stream_graphs

PLAN, DONE = "Plan: drop the staging tables.", "Dropped the staging tables."
QUESTION = "The graph paused before “apply”. Continue?"
STOPPED = "Stopped before “apply”. Write a new message to start again."


def in_process(graph: str, tmp_path: Path) -> LangGraphRunner:
    settings = AgentSettings(
        graph=f"tests.agent.stream_graphs:{graph}", checkpointer_url="memory://", data_dir=str(tmp_path)
    )
    return LangGraphRunner(settings)


async def _pause_then(make_gateway, runner: AgentRunner, choice: str, chat_id: str) -> list[str]:  # type: ignore[no-untyped-def]
    gateway, chat = await make_gateway(MemoryStore(f"bp-{chat_id}"), runner)
    await chat.say("clean up staging", chat=chat_id)
    await gateway.drain(timeout=60)
    request = chat.last_request().request
    assert request.question == QUESTION
    assert [o.label for o in request.options] == ["Continue", "Stop"]
    assert chat.texts() == [PLAN]
    thread_id = await gateway.store.thread_for_chat(chat.conversation(chat_id).thread_key, 3600)
    waiting = await runner.pending_request(thread_id)  # what ``clarigate chat`` shows again
    assert waiting is not None and waiting.request_id == request.request_id
    outcome = await chat.click([o.label for o in request.options].index(choice))
    assert outcome.status is AnswerStatus.ACCEPTED
    await gateway.drain(timeout=60)
    if choice == "Continue":
        assert await runner.pending_request(thread_id) is None
    return chat.texts()


@pytest.mark.parametrize("graph", ["pause_before", "pause_after"])
async def test_a_breakpoint_in_process_asks_and_continue_runs_the_next_step(make_gateway, tmp_path, graph):
    stream_graphs.STEPS.clear()
    runner = in_process(graph, tmp_path)
    try:
        assert await _pause_then(make_gateway, runner, "Continue", graph) == [PLAN, DONE]
    finally:
        await runner.aclose()
    assert stream_graphs.STEPS == ["plan", "apply"]


async def test_stop_at_a_breakpoint_in_process_runs_nothing_more(make_gateway, tmp_path):
    stream_graphs.STEPS.clear()
    runner = in_process("pause_before", tmp_path)
    try:
        assert await _pause_then(make_gateway, runner, "Stop", "stop") == [PLAN, STOPPED]
    finally:
        await runner.aclose()
    assert stream_graphs.STEPS == ["plan"]


@pytest.mark.parametrize(("graph", "choice"), [("pause_before", "Continue"), ("pause_after", "Stop")])
async def test_a_breakpoint_on_the_server_asks_continue_or_stop(
    make_gateway, langgraph_server, graph, choice
):
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id=graph))
    try:
        texts = await _pause_then(make_gateway, runner, choice, f"server-{graph}")
    finally:
        await runner.aclose()
    assert texts == [PLAN, DONE if choice == "Continue" else STOPPED]


async def test_a_graph_without_messages_in_its_state_stops_the_start_naming_what_is_needed(
    tmp_path: Path, langgraph_server
):
    runner = in_process("no_messages", tmp_path)
    with pytest.raises(ValueError, match="state has no 'messages' key") as raised:
        await runner.start()
    assert "tests.agent.stream_graphs:no_messages" in str(raised.value) and "count" in str(raised.value)
    assert "MessagesState" in str(raised.value)
    await runner.aclose()

    server = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="no_messages"))
    with pytest.raises(RuntimeError, match="state has no 'messages' key") as raised:
        await server.start()
    assert "'no_messages'" in str(raised.value) and "MessagesState" in str(raised.value)
    await server.aclose()
