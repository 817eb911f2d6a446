"""What streams into the live message from an operator's graph: the text of any node's model call
(a node named ``answer.v2`` too), but not a middleware hook's, nor a call tagged ``nostream``
(a router's classifier: LangGraph's ``messages`` mode leaves it out)."""

from __future__ import annotations

from pathlib import Path

import pytest

from clarigate.agent.events import RunEvent, TextDelta
from clarigate.agent.harness import AgentSettings
from clarigate.agent.run_events import text_delta
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent.node_stream_graphs import ANSWER, ROUTE


async def _streamed(graph: str, tmp_path: Path) -> tuple[str, str]:
    """The text a turn on ``graph`` streamed to the live message, and its reply."""
    events: list[RunEvent] = []

    async def hear(event: RunEvent) -> None:
        events.append(event)

    runner = LangGraphRunner(AgentSettings(graph=graph, checkpointer_url="memory://", data_dir=str(tmp_path)))
    await runner.start()
    try:
        output = await runner.run_turn(
            RunInput("t1", "where is my invoice?", metadata={"inbound_id": "m1"}, on_event=hear)
        )
    finally:
        await runner.aclose()
    return "".join(e.text for e in events if isinstance(e, TextDelta)), " ".join(map(str, output.replies))


async def test_a_node_whose_name_holds_a_dot_streams_its_answer(tmp_path: Path) -> None:
    streamed, reply = await _streamed("tests.agent.node_stream_graphs:dotted_node", tmp_path)
    assert streamed == ANSWER
    assert ANSWER in reply


async def test_a_model_call_tagged_nostream_is_not_in_the_live_message(tmp_path: Path) -> None:
    streamed, reply = await _streamed("tests.agent.node_stream_graphs:router", tmp_path)
    assert streamed == ANSWER and ROUTE not in streamed
    assert ROUTE not in reply


@pytest.mark.parametrize("hook", ["before_agent", "before_model", "after_model", "after_agent"])
def test_a_middleware_hooks_own_model_call_is_not_the_answer(hook: str) -> None:
    chunk = {"type": "AIMessageChunk", "content": "Is the question clear? yes", "id": "m1"}
    assert text_delta(chunk, {"langgraph_node": f"ClarifyFirstMiddleware.{hook}"}) is None
    assert text_delta(chunk, {"langgraph_node": "model"}) is not None
    assert text_delta(chunk, {"langgraph_node": "answer.v2"}) is not None
