"""Operators' graphs of shapes the gateway must read right: parallel branches, one of which asks
while the other has already replied (a super-step stopped on an interrupt keeps the finished
branch's reply as a pending write), and states other than ``MessagesState`` (imported by path)."""

from __future__ import annotations

from typing import Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt


def _replies(state: MessagesState) -> dict[str, Any]:
    return {"messages": [AIMessage("Branch A finished.")]}  # no id: LangGraph's reducer gives one


def _asks_size(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Size?", "options": ["S", "L"]})
    return {"messages": [AIMessage(f"size={answer['value']}")]}


def _asks_colour(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Colour?", "options": ["red", "blue"]})
    return {"messages": [AIMessage(f"colour={answer['value']}")]}


def _fan_out(**nodes: Any) -> Any:
    builder = StateGraph(MessagesState)
    for name, node in nodes.items():
        builder.add_node(name, node)
        builder.add_edge(START, name)
    return builder.compile()


#: Two branches in one step: "a" replies at once, "b" asks a size first.
reply_and_ask = _fan_out(a=_replies, b=_asks_size)
#: Two branches in one step, each asking: a size, then a colour.
two_asks = _fan_out(b=_asks_size, c=_asks_colour)


class Full(MessagesState):
    answer: str


class Answer(TypedDict):
    answer: str


def _answers(state: Full) -> dict[str, Any]:
    said = state["messages"][-1].text
    return {"messages": [AIMessage(f"echo: {said}")], "answer": said}


_output_builder = StateGraph(Full, input_schema=MessagesState, output_schema=Answer)
_output_builder.add_node("answer", _answers)
_output_builder.add_edge(START, "answer")
#: Its output schema leaves ``messages`` out: what ``invoke`` returns holds only the answer.
answer_output = _output_builder.compile()


class Unreduced(TypedDict):
    messages: list[AnyMessage]  # no reducer: every write replaces the list


def _counts(state: Unreduced) -> dict[str, Any]:
    return {"messages": [AIMessage(f"I see {len(state['messages'])} message(s).")]}


_unreduced_builder = StateGraph(Unreduced)
_unreduced_builder.add_node("count", _counts)
_unreduced_builder.add_edge(START, "count")
#: ``messages`` without ``add_messages``: the person's message replaces the thread.
no_reducer = _unreduced_builder.compile()
