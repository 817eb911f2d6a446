"""Operators' graphs that stream progress of their own, pause on static breakpoints, or keep no
``messages`` in their state (imported by path in the tests, and served by the test LangGraph
server: ``tests/gateway/langgraph_server``)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, TypedDict

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_stream_writer
from langgraph.graph import END, START, MessagesState, StateGraph

#: Seconds between two progress lines: long enough for every platform's live message to show each.
PROGRESS_PAUSE = float(os.environ.get("PROGRESS_PAUSE", "1.4"))
#: What each step of the breakpoint graphs really did, in this process.
STEPS: list[str] = []


async def _research(state: MessagesState) -> dict[str, Any]:
    write = get_stream_writer()
    write("Fetching sources")  # a plain string
    await asyncio.sleep(PROGRESS_PAUSE)
    write({"progress": "Reading page 2 of 3 <!here> @everyone"})  # the documented mapping
    await asyncio.sleep(PROGRESS_PAUSE)
    write({"rows": 3})  # other custom data (for another client): not a progress line
    return {"messages": [AIMessage(content="Found 3 sources.")]}


#: Writes two progress lines with ``get_stream_writer()`` while it works, then answers.
progress = StateGraph(MessagesState).add_node("research", _research).add_edge(START, "research").compile()


def _plan(state: MessagesState) -> dict[str, Any]:
    STEPS.append("plan")
    return {"messages": [AIMessage(content="Plan: drop the staging tables.")]}


def _apply(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
    STEPS.append("apply")
    if log := os.environ.get("TOOL_LOG"):  # on the test server: the side effect, one line a time
        with Path(log).open("a", encoding="utf-8") as out:
            out.write(f"apply {config['configurable']['thread_id']}\n")
    return {"messages": [AIMessage(content="Dropped the staging tables.")]}


def _two_steps() -> StateGraph:
    builder = StateGraph(MessagesState)
    builder.add_node("plan", _plan).add_node("apply", _apply)
    builder.add_edge(START, "plan").add_edge("plan", "apply").add_edge("apply", END)
    return builder


#: Plans, then applies: no breakpoint of its own.
two_steps = _two_steps().compile()
#: Stops before ``apply`` (a static breakpoint set at compile time).
pause_before = _two_steps().compile(interrupt_before=["apply"])
#: Stops after ``plan``.
pause_after = _two_steps().compile(interrupt_after=["plan"])


def _in_subgraph(inner_before: list[str]) -> StateGraph:
    inner = StateGraph(MessagesState).add_node("apply", _apply).add_edge(START, "apply")
    builder = StateGraph(MessagesState)
    builder.add_node("plan", _plan).add_node("cleanup", inner.compile(interrupt_before=inner_before))
    builder.add_edge(START, "plan").add_edge("plan", "cleanup").add_edge("cleanup", END)
    return builder


#: Plans, then its ``cleanup`` subgraph stops before its own ``apply`` (a breakpoint of the subgraph).
pause_in_subgraph = _in_subgraph(["apply"]).compile()


def _check(state: MessagesState) -> dict[str, Any]:
    STEPS.append("check")
    return {}


def _after_in_subgraph() -> StateGraph:
    inner = StateGraph(MessagesState).add_node("check", _check).add_node("apply", _apply)
    inner.add_edge(START, "check").add_edge("check", "apply")
    builder = StateGraph(MessagesState)
    builder.add_node("plan", _plan).add_node("cleanup", inner.compile(interrupt_after=["check"]))
    builder.add_edge(START, "plan").add_edge("plan", "cleanup").add_edge("cleanup", END)
    return builder


#: Plans, then its ``cleanup`` subgraph checks and stops after ``check`` (``interrupt_after`` of the
#: subgraph), before its ``apply``.
pause_after_in_subgraph = _after_in_subgraph().compile()
#: Plans, then stops before the ``cleanup`` step, a subgraph (the parent's ``interrupt_before``).
pause_before_subgraph = _in_subgraph([]).compile(interrupt_before=["cleanup"])


def _after_subgraph_end() -> StateGraph:
    inner = StateGraph(MessagesState).add_node("check", _check).add_edge(START, "check")
    builder = StateGraph(MessagesState).add_node("plan", _plan).add_node("apply", _apply)
    builder.add_node("cleanup", inner.compile(interrupt_after=["check"]))
    builder.add_edge(START, "plan").add_edge("plan", "cleanup").add_edge("cleanup", "apply")
    return builder.add_edge("apply", END)


#: Plans, then its ``cleanup`` subgraph stops after its only step (no step of it left to run: the
#: parent still waits on ``cleanup``), and the parent's ``apply`` comes after.
pause_at_subgraph_end = _after_subgraph_end().compile()


class Counter(TypedDict):
    count: int


#: A graph whose state has no ``messages`` key: the gateway cannot run it.
no_messages = (
    StateGraph(Counter)
    .add_node("bump", lambda state: {"count": state.get("count", 0) + 1})
    .add_edge(START, "bump")
    .compile()
)
