"""Operators' graphs whose model calls stream (or do not) into the live message: an answer from a
node whose name holds a dot, and a router whose classifier call is tagged ``nostream``
(imported by path in the tests)."""

from __future__ import annotations

from itertools import cycle
from typing import Any

from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph

#: What the answering nodes say, and what the classifier says (never the answer).
ANSWER = "Your invoice was sent on Monday."
ROUTE = "ROUTE=billing"

_answerer = GenericFakeChatModel(messages=cycle([AIMessage(content=ANSWER)]))
#: The classifier: an internal call, tagged so LangGraph's ``messages`` mode leaves it out.
_classifier = GenericFakeChatModel(messages=cycle([AIMessage(content=ROUTE)])).with_config(tags=["nostream"])


async def _answer(state: MessagesState) -> dict[str, Any]:
    return {"messages": [await _answerer.ainvoke(state["messages"])]}


#: One node, ``answer.v2``, whose model call streams the answer.
dotted_node = StateGraph(MessagesState).add_node("answer.v2", _answer).add_edge(START, "answer.v2").compile()


class _Routed(MessagesState):
    route: str


async def _route(state: _Routed) -> dict[str, Any]:
    said = await _classifier.ainvoke(state["messages"])
    return {"route": str(said.content).removeprefix("ROUTE=")}


def _router() -> Any:
    builder = StateGraph(_Routed).add_node("route", _route).add_node("billing", _answer)
    builder.add_edge(START, "route").add_edge("route", "billing").add_edge("billing", END)
    return builder.compile()


#: Classifies the message (tagged ``nostream``), then answers from the ``billing`` node.
router = _router()
