"""Graphs a route might name in ``agent.graph`` (imported by path in the route tests)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import START, MessagesState, StateGraph


def _count(state: MessagesState) -> dict[str, Any]:
    said = [m.text for m in state["messages"] if isinstance(m, HumanMessage)]
    return {"messages": [AIMessage(content=f"I have read {len(said)} message(s): {said}")]}


_counting = StateGraph(MessagesState)
_counting.add_node("count", _count)
_counting.add_edge(START, "count")
#: Replies with the person's messages it has in its thread.
counting = _counting.compile()
