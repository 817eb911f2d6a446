"""A turn costs the checkpointer one read and one write, however many graph steps it takes."""

from __future__ import annotations

from collections import Counter
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from agent.checkpoint import Checkpointer
from agent.graph import build_agent_graph
from agent.harness import ClarifyingAgent
from agent.protocol import answer_message_text, answer_with_option

from .conftest import ask, scripted


class CountingSaver(InMemorySaver):
    """Counts the saver calls a run makes."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()

    async def aget_tuple(self, config: Any) -> Any:
        self.counts["read"] += 1
        return await super().aget_tuple(config)

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        self.counts["write"] += 1
        return await super().aput(*args, **kwargs)

    async def aput_writes(self, *args: Any, **kwargs: Any) -> Any:
        self.counts["write"] += 1
        return await super().aput_writes(*args, **kwargs)


async def test_two_turn_clarification_costs_two_saver_calls_per_turn(recorder: Any) -> None:
    saver = CountingSaver()
    model = scripted(
        {"content": "", "tool_calls": [ask(options=["A", "B"])]},
        {"content": "", "tool_calls": [{"name": "record_note", "args": {"note": "{last_user}"}}]},
        {"content": "Done."},
    )
    graph = build_agent_graph(model, tools=[recorder.tool], checkpointer=saver)
    agent = ClarifyingAgent(graph, Checkpointer(saver, "memory"))

    asked = await agent.run_turn("t1", "start")
    assert asked.request is not None
    response = answer_with_option(asked.request, "option-1", None)
    done = await agent.run_turn("t1", answer_message_text(asked.request, response), response)

    assert done.replies == ["Done."]
    assert len(recorder.ran) == 1  # the second turn took several steps: model, tool, model
    assert saver.counts == {"read": 2, "write": 2}
