"""Operators' own ``create_agent`` graphs whose review of ``deploy`` allows no ``reject``
(LangChain's ``allowed_decisions``), on a scripted model: it deploys, then answers."""

from __future__ import annotations

from typing import Any

RAN: list[str] = []  # what ``deploy`` really did


def deploy(region: str) -> str:
    """Deploy to ``region``."""
    RAN.append(region)
    return f"deployed to {region}"


def _agent(checkpointer: Any, allowed: list[str]) -> Any:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

    call = {"name": "deploy", "args": {"region": "eu-west"}}
    turns = [ScriptedTurn.model_validate({"tool_calls": [call]})]
    model = ScriptedChatModel(
        turns=[*turns, *(ScriptedTurn(content="You said: {last_user}") for _ in range(4))]
    )
    review = {"deploy": {"allowed_decisions": allowed}}
    return create_agent(
        model,
        tools=[deploy],
        middleware=[HumanInTheLoopMiddleware(review)],  # type: ignore[arg-type]
        checkpointer=checkpointer,
    )


def make_approve_or_edit_agent(checkpointer: Any) -> Any:
    """Approve and Edit only: nothing stands for a Cancel or a new message."""
    return _agent(checkpointer, ["approve", "edit"])


def make_approve_or_respond_agent(checkpointer: Any) -> Any:
    """Approve and Reply instead (``respond``), no ``reject``."""
    return _agent(checkpointer, ["approve", "respond"])


def lookup(term: str) -> str:
    """Look ``term`` up (no approval needed)."""
    RAN.append(f"lookup {term}")
    return f"found {term}"


def _deploy_and_lookup(checkpointer: Any, mode: str) -> Any:
    """The model calls ``deploy`` (approve and edit only) and ``lookup`` (not reviewed) at once."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

    calls = [
        {"name": "deploy", "args": {"region": "eu-west"}},
        {"name": "lookup", "args": {"term": "version"}},
    ]
    turns = [ScriptedTurn.model_validate({"tool_calls": calls})]
    model = ScriptedChatModel(turns=[*turns, ScriptedTurn(content="You said: {last_user}")])
    review = HumanInTheLoopMiddleware(
        {"deploy": {"allowed_decisions": ["approve", "edit"]}}, interrupt_mode=mode
    )
    return create_agent(model, tools=[deploy, lookup], middleware=[review], checkpointer=checkpointer)  # type: ignore[arg-type]


def make_deploy_and_lookup_agent(checkpointer: Any) -> Any:
    """One approval for the whole step (``batched``)."""
    return _deploy_and_lookup(checkpointer, "batched")


def make_per_call_deploy_and_lookup_agent(checkpointer: Any) -> Any:
    """One approval per gated call, as the call starts (``per_call``): ``lookup`` runs meanwhile."""
    return _deploy_and_lookup(checkpointer, "per_call")


def make_nested_approval_graph(checkpointer: Any) -> Any:
    """The approve-or-edit agent as one node of a graph of one's own: its calls are in the node's
    own messages, not yet in the graph's."""
    from langgraph.graph import START, MessagesState, StateGraph

    inner = _agent(None, ["approve", "edit"])
    return (
        StateGraph(MessagesState)
        .add_node("agent", inner)
        .add_edge(START, "agent")
        .compile(checkpointer=checkpointer)
    )
