"""The agent graph: ``create_agent`` with the clarification tool, prompt and middleware."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.checkpoint.base import BaseCheckpointSaver

from agent.clarify_first import ClarifyFirstMiddleware
from agent.history import AnswerUnfinishedCallsMiddleware
from agent.middleware import ClarificationMiddleware, ProceedWithoutClarificationMiddleware
from agent.prompts import SYSTEM_PROMPT
from agent.tools import build_ask_clarification_tool


def build_agent_graph(
    model: BaseChatModel,
    *,
    tools: Sequence[BaseTool] = (),
    checkpointer: BaseCheckpointSaver | None = None,
    allow_clarification: bool = False,
    disable_clarification: bool = False,
    system_prompt: str = SYSTEM_PROMPT,
) -> Any:
    """The compiled agent: ``ask_clarification`` plus ``tools``, on ``checkpointer``.

    ``disable_clarification`` answers every question with "proceed with your best
    judgment" (non-interactive use); it also switches the clarify-first phase off.
    Middleware that is not needed is left out: every hook is one more graph step.
    """
    middleware: list[AgentMiddleware] = [AnswerUnfinishedCallsMiddleware()]
    if disable_clarification:
        middleware.append(ProceedWithoutClarificationMiddleware())
    else:
        if allow_clarification:
            middleware.append(ClarifyFirstMiddleware(model))
        middleware.append(ClarificationMiddleware())
    return create_agent(
        model,
        tools=[build_ask_clarification_tool(), *tools],
        system_prompt=system_prompt,
        middleware=middleware,
        checkpointer=checkpointer,
    )
