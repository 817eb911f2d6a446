"""Operators' graphs that read who is talking (``clarigate.agent.who``): from their runtime
context, whatever their context schema, and from ``config["configurable"]``. Each replies with
what it read, as JSON: ``{"context": …, "configurable": …}``. Served in process (``agent.graph``)
and on the test LangGraph server (``tests/gateway/langgraph_server/graphs.py``)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, is_dataclass
from typing import Any

from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typing_extensions import TypedDict

from clarigate.agent.who import Speaker


@dataclass
class DeclaresSpeaker:
    """A dataclass context that names the speaker's field (and one of its own)."""

    clarigate: Speaker | None = None
    tier: str = "free"


@dataclass
class OwnContextOnly:
    """A dataclass context that knows nothing of clarigate: it must still run."""

    tier: str = "free"


class TypedContext(TypedDict, total=False):
    """A TypedDict context naming the speaker."""

    clarigate: Speaker


class ModelContext(BaseModel):
    """A pydantic context naming the speaker."""

    clarigate: Speaker | None = None


def _plain(context: Any) -> Any:
    if is_dataclass(context) and not isinstance(context, type):
        return {"type": type(context).__name__, **asdict(context)}
    if isinstance(context, BaseModel):
        return {"type": type(context).__name__, **context.model_dump()}
    return context


def _tell(state: MessagesState, runtime: Runtime[Any], config: RunnableConfig) -> dict[str, Any]:
    seen = {
        "context": _plain(runtime.context),
        "configurable": (config.get("configurable") or {}).get("clarigate"),
    }
    return {"messages": [AIMessage(content=json.dumps(seen, sort_keys=True))]}


def _graph(schema: Any) -> Any:
    builder = StateGraph(MessagesState, context_schema=schema)
    builder.add_node("tell", _tell)
    builder.add_edge(START, "tell")
    return builder


#: Compiled without a checkpointer: the gateway (or the server) gives them theirs.
declares = _graph(DeclaresSpeaker).compile()
own_context = _graph(OwnContextOnly).compile()
typed = _graph(TypedContext).compile()
model = _graph(ModelContext).compile()
no_schema = _graph(None).compile()
