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
