"""A superseding run that fails: in one of the graph's steps it is logged and the new message runs
(its input drops the failed step); anywhere else (the checkpointer) it is raised, so the message
waits instead of running over an interrupt nobody turned down."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from clarigate.agent.supersede import in_a_step, supersede_pending
from tests.agent import user_graphs


async def _asking() -> tuple[Any, dict[str, Any]]:
    """A thread whose graph waits on its region question."""
    graph = user_graphs.make_graph(InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t"}}
    await graph.ainvoke({"messages": [HumanMessage("deploy", id="h1")]}, config)
    return graph, config


async def test_a_failure_outside_the_graphs_steps_is_raised_so_the_message_waits() -> None:
    graph, config = await _asking()

    async def unreachable(command: Any) -> Any:
        raise ConnectionError("the checkpointer is unreachable")

    with pytest.raises(ConnectionError):
        await supersede_pending(graph, config, unreachable)
    assert [i.value["question"] for i in (await graph.aget_state(config)).interrupts] == ["Which region?"]


async def test_a_failure_in_a_step_is_logged_and_the_new_message_runs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    graph, config = await _asking()
    failure = RuntimeError("the step broke")
    failure.add_note("During task with name 'ask_region' and id 'x'")  # as LangGraph names it

    async def failing(command: Any) -> Any:
        raise failure

    before = await supersede_pending(graph, config, failing)
    assert [m.id for m in before] == ["h1"]
    [logged] = [r for r in caplog.records if r.name == "clarigate.agent.supersede" and r.exc_info]
    assert logged.exc_info is not None and logged.exc_info[1] is failure


def test_only_an_error_langgraph_names_a_task_for_is_the_graphs() -> None:
    named = ValueError("no")
    named.add_note("During task with name 'n' and id '1'")
    assert in_a_step(named) and not in_a_step(ValueError("no")) and not in_a_step(ConnectionError())
