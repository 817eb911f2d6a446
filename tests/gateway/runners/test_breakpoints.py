"""Graphs that pause on static breakpoints (``interrupt_before`` / ``interrupt_after``) asked as
"Continue / Stop", in process and on a LangGraph server; a graph whose state has no ``messages``
is an error at start naming what the gateway needs."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.base import AgentRunner, RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import stream_graphs

from ..langgraph_server.process import LangGraphServer

PLAN, DONE = "Plan: drop the staging tables.", "Dropped the staging tables."
QUESTION = "The graph paused before “apply”. Continue?"
STOPPED = "Stopped before “apply”. Write a new message to start again."


def in_process(graph: str, tmp_path: Path) -> LangGraphRunner:
    settings = AgentSettings(
        graph=f"tests.agent.stream_graphs:{graph}", checkpointer_url="memory://", data_dir=str(tmp_path)
    )
    return LangGraphRunner(settings)


async def _pause_then(  # type: ignore[no-untyped-def]
    make_gateway, runner: AgentRunner, choice: str, chat_id: str, waits: str = "apply"
) -> list[str]:
    """The texts the chat holds after the graph paused before ``waits`` and ``choice`` was clicked."""
    gateway, chat = await make_gateway(MemoryStore(f"bp-{chat_id}"), runner)
    await chat.say("clean up staging", chat=chat_id)
    await gateway.drain(timeout=60)
    request = chat.last_request().request
    assert request.question == QUESTION.replace("apply", waits)
    assert [o.label for o in request.options] == ["Continue", "Stop"]
    assert chat.texts() == [PLAN]
    thread_id = await gateway.store.thread_for_chat(chat.conversation(chat_id).thread_key, 3600)
    waiting = await runner.pending_request(thread_id)  # what ``clarigate chat`` shows again
    assert waiting is not None and waiting.request_id == request.request_id
    outcome = await chat.click([o.label for o in request.options].index(choice))
    assert outcome.status is AnswerStatus.ACCEPTED
    await gateway.drain(timeout=60)
    # no "Continue?" left to show again: the step ran, or Stop dropped it
    assert await runner.pending_request(thread_id) is None
    if choice == "Stop":
        await _write_again(gateway, chat, runner, chat_id, thread_id, request)
    return chat.texts()


async def _write_again(
    gateway, chat, runner: AgentRunner, chat_id: str, thread_id: str, stopped: HumanInputRequest
) -> None:  # type: ignore[no-untyped-def]
    """After Stop, a new message starts the graph afresh on the same thread: it plans again (its
    history kept) and asks about the new pause, never the one the person stopped."""
    await chat.say("plan it again", chat=chat_id)
    await gateway.drain(timeout=60)
    assert chat.texts()[-1] == PLAN
    asked = chat.last_request().request
    assert asked.question == stopped.question and asked.request_id != stopped.request_id
    waiting = await runner.pending_request(thread_id)
    assert waiting is not None and waiting.request_id == asked.request_id
    assert await _said(runner, thread_id) == ["clean up staging", PLAN, "plan it again", PLAN]


async def _said(runner: AgentRunner, thread_id: str) -> list[str]:
    """The messages the thread holds (the in-process agent's checkpoints, or the server's)."""
    if isinstance(runner, LangGraphRunner):
        return [str(m.content) for m in await (await runner._get()).history(thread_id)]
    assert isinstance(runner, LangGraphServerRunner)
    state = await runner._client.threads.get_state(server_thread_id(thread_id))
    return [str(m["content"]) for m in state["values"]["messages"]]


#: A graph, the step it pauses before, and the steps that ran once Continue was clicked.
CONTINUED = {
    "pause_before": ("apply", ["plan", "apply"]),
    "pause_after": ("apply", ["plan", "apply"]),
    "pause_in_subgraph": ("cleanup", ["plan", "apply"]),  # the subgraph resumed where it stopped
    "pause_after_in_subgraph": ("cleanup", ["plan", "check", "apply"]),
    "pause_at_subgraph_end": ("cleanup", ["plan", "check", "apply"]),
}


@pytest.mark.parametrize("graph", list(CONTINUED))
async def test_a_breakpoint_in_process_asks_and_continue_runs_the_next_step(make_gateway, tmp_path, graph):
    stream_graphs.STEPS.clear()
    waits, steps = CONTINUED[graph]
    runner = in_process(graph, tmp_path)
    try:
        assert await _pause_then(make_gateway, runner, "Continue", graph, waits) == [PLAN, DONE]
    finally:
        await runner.aclose()
    assert stream_graphs.STEPS == steps


@pytest.mark.parametrize("graph", ["pause_before", "pause_after"])
async def test_stop_at_a_breakpoint_in_process_drops_the_step_and_a_new_message_starts_afresh(
    make_gateway, tmp_path, graph
):
    stream_graphs.STEPS.clear()
    runner = in_process(graph, tmp_path)
    try:
        assert await _pause_then(make_gateway, runner, "Stop", f"stop-{graph}") == [PLAN, STOPPED, PLAN]
    finally:
        await runner.aclose()
    assert stream_graphs.STEPS == ["plan", "plan"]  # the stopped step never ran


def _applies(server: LangGraphServer | None) -> int:
    """How many times the server's graphs ran their ``apply`` step (the side effect) so far."""
    return 0 if server is None else sum(line.startswith("apply ") for line in server.tool_calls())


#: Graphs that pause in a subgraph (the parent waits on its ``cleanup`` step), and the steps that
#: run in process up to the pause.
SUBGRAPH_PAUSES = {
    "pause_in_subgraph": ["plan"],  # the subgraph's interrupt_before: nothing of it ran
    "pause_after_in_subgraph": ["plan", "check"],  # the subgraph's interrupt_after its check
    "pause_before_subgraph": ["plan"],  # the parent's interrupt_before names the subgraph's node
    "pause_at_subgraph_end": ["plan", "check"],  # after the subgraph's last step, before the parent's
}


@pytest.mark.parametrize("where", ["in_process", "server"])
@pytest.mark.parametrize("graph", list(SUBGRAPH_PAUSES))
async def test_stop_at_a_breakpoint_in_a_subgraph_drops_it_and_a_new_message_starts_afresh(
    request, make_gateway, tmp_path, graph, where
):
    """Asked "Continue?" before the subgraph's step; Stop says so and leaves the thread paused no
    more (``clarigate chat`` asks nothing), and the next message plans again on the same thread,
    its history kept: the step behind the breakpoint never ran."""
    stream_graphs.STEPS.clear()
    server = request.getfixturevalue("langgraph_server") if where == "server" else None
    if server is not None:
        runner: AgentRunner = LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph))
    else:
        runner = in_process(graph, tmp_path)
    applied = _applies(server)
    try:
        texts = await _pause_then(make_gateway, runner, "Stop", f"sub-{where}-{graph}", waits="cleanup")
    finally:
        await runner.aclose()
    assert texts == [PLAN, STOPPED.replace("apply", "cleanup"), PLAN]
    if server is not None:
        assert _applies(server) == applied  # the stopped step never ran on the server
    else:
        assert stream_graphs.STEPS == SUBGRAPH_PAUSES[graph] * 2  # the stopped step never ran


@pytest.mark.parametrize("graph", ["pause_in_subgraph", "pause_after_in_subgraph"])
async def test_a_turn_given_again_while_a_subgraph_is_paused_asks_again_and_runs_nothing(tmp_path, graph):
    """The same turn run once more in process (its job changed hands) while the graph waits on a
    subgraph's breakpoint: "Continue?" again, never the step behind the breakpoint by itself."""
    stream_graphs.STEPS.clear()
    runner = in_process(graph, tmp_path)
    thread_id = uuid.uuid4().hex
    turn = RunInput(thread_id, "clean up staging", metadata={"inbound_id": "m1"})
    try:
        asked = [(await runner.run_turn(turn)).request for _ in range(2)]
        assert [a.question if a else None for a in asked] == [QUESTION.replace("apply", "cleanup")] * 2
        assert await _said(runner, thread_id) == ["clean up staging", PLAN]
    finally:
        await runner.aclose()
    assert "apply" not in stream_graphs.STEPS


@pytest.mark.parametrize("where", ["in_process", "server"])
async def test_a_stop_run_again_says_stopped_again_and_runs_nothing(request, tmp_path, where):
    """The same Stop given twice (its job changed hands after the step was dropped) is told it
    stopped both times: never taken as a new message "Stop" that would start the graph again."""
    stream_graphs.STEPS.clear()
    if where == "server":
        url = request.getfixturevalue("langgraph_server").url
        runner: AgentRunner = LangGraphServerRunner(AgentOptions(server_url=url, assistant_id="pause_before"))
    else:
        runner = in_process("pause_before", tmp_path)
    thread_id = uuid.uuid4().hex
    try:
        asked = (
            await runner.run_turn(RunInput(thread_id, "clean up staging", metadata={"inbound_id": "m1"}))
        ).request
        assert asked is not None and asked.question == QUESTION
        stop = asked.options[1]
        answer = HumanInputResponse(
            request_id=asked.request_id, response_kind="option", option_id=stop.id, value=stop.value
        )
        turn = RunInput(thread_id, stop.label, response=answer, metadata={"inbound_id": "m2"})
        for _ in range(2):
            output = await runner.run_turn(turn)
            assert (output.replies, output.request) == ([STOPPED], None)
        assert await runner.pending_request(thread_id) is None
        assert await _said(runner, thread_id) == ["clean up staging", PLAN]
    finally:
        await runner.aclose()
    if where == "in_process":
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
    assert texts == ([PLAN, DONE] if choice == "Continue" else [PLAN, STOPPED, PLAN])


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
