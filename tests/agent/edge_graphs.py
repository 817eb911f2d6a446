"""Operators' own graphs at the edges of what the gateway expects: one that finishes without a word
to say, two questions pending from one step (one of them typed), and interrupt values that hold
no text or are not in the protocol's shape (imported by path in the tests; the first two served on
the tests' LangGraph server too)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

DONE: list[str] = []  # what ``silent`` did, and which of ``parallel``'s steps went on
ANSWERS: list[Any] = []  # what each interrupt() of ``odd`` was resumed with
#: What ``odd`` asks with (a test sets its own before it runs).
ODD: list[Any] = [None]


def _single(name: str, node: Any) -> Any:
    return StateGraph(MessagesState).add_node(name, node).add_edge(START, name).compile()


def _side_effect(state: MessagesState) -> dict[str, Any]:
    DONE.append(f"noted {state['messages'][-1].text}")
    return {}  # nothing to say: the graph only did something


#: Does something and says nothing (a node returning ``{}``).
silent = _single("note", _side_effect)


class Deploy(BaseModel):
    """Whether to deploy."""

    sure: bool  # required: a declined answer (Cancel) does not fit


def _confirm(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Really deploy?", response_schema=Deploy)
    DONE.append(f"confirmed {answer}")
    return {"messages": [AIMessage(content="Deploying.")]}


def _size(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Size?")
    DONE.append(f"size {answer}")
    return {"messages": [AIMessage(content=f"Size {answer}.")]}


_parallel = StateGraph(MessagesState)
_parallel.add_node("a_confirm", _confirm)
_parallel.add_node("b_size", _size)
_parallel.add_edge(START, "a_confirm")
_parallel.add_edge(START, "b_size")
#: Two steps of one super-step, each asking: a typed "Really deploy?" and a plain "Size?".
parallel = _parallel.compile()


def _odd(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(ODD[-1])
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Got {answer!r}.")]}


#: Asks with whatever ``ODD`` holds last.
odd = _single("ask", _odd)


def _odd_form(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(ODD[-1], response_schema=Deploy)
    ANSWERS.append(answer)
    return {"messages": [AIMessage(content=f"Got {answer!r}.")]}


#: Asks for ``Deploy`` as a form, with whatever ``ODD`` holds last.
odd_form = _single("ask", _odd_form)
