"""Graphs whose runs do not end as planned, served by the test LangGraph server and importable in
process alike (they need nothing from the environment): one that never ends (it reaches the
recursion limit), one whose job takes its time (long enough to be stopped on the server, or by the
gateway's run timeout)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph

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
