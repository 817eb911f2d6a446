"""Graphs whose runs do not end as planned, served by the test LangGraph server and importable in
process alike (they need nothing from the environment): one that never ends (it reaches the
recursion limit), one whose job takes its time (long enough to be stopped on the server, or by the
gateway's run timeout), one that asks first and takes its time over the answer."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

#: What the slow job says when it is done (and writes to the tool log, ``TOOL_LOG``, on a server).
SLOW_DONE = "Slow job done: deleted the old backups."
#: How long the slow job takes.
SLOW_SECONDS = 5.0


def _spin(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage(content="again")]}


_loop = StateGraph(MessagesState)
_loop.add_node("spin", _spin)
_loop.add_edge(START, "spin")
_loop.add_edge("spin", "spin")
#: Never ends: reaches the recursion limit.
loop = _loop.compile()


def _note(log: Path, line: str) -> None:
    with log.open("a", encoding="utf-8") as file:
        file.write(line + "\n")


async def _slow_if(state: MessagesState) -> dict[str, Any]:
    text = state["messages"][-1].text
    if "slow" not in text:
        return {"messages": [AIMessage(content=f"echo: {text}")]}
    await asyncio.sleep(SLOW_SECONDS)
    if log := os.environ.get("TOOL_LOG"):
        await asyncio.to_thread(_note, Path(log), "deleted the old backups")
    return {"messages": [AIMessage(content=SLOW_DONE)]}


_slow = StateGraph(MessagesState)
_slow.add_node("step", _slow_if)
_slow.add_edge(START, "step")
#: Takes ``SLOW_SECONDS`` for a message saying "slow" (then deletes the old backups and says so);
#: echoes any other at once.
slow_if = _slow.compile()


async def _ask_then_slow(state: MessagesState) -> dict[str, Any]:
    text = state["messages"][-1].text
    if "clean" not in text:
        return {"messages": [AIMessage(content=f"echo: {text}")]}
    answer = interrupt({"question": "Which backups should I delete?", "options": ["old", "none"]})
    await asyncio.sleep(SLOW_SECONDS)  # any answer, a declined one too, takes its time
    return {"messages": [AIMessage(content=f"Cleanup answered: {answer}")]}


_asks = StateGraph(MessagesState)
_asks.add_node("step", _ask_then_slow)
_asks.add_edge(START, "step")
#: Asks which backups to delete for a message saying "clean", then takes ``SLOW_SECONDS`` over
#: the answer (long enough for the run that resumes it to be stopped); echoes any other at once.
ask_then_slow = _asks.compile()
