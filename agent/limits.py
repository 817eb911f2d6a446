"""Bounds on a run (LangChain's call-limit middleware) that end it with a short honest message.

The middleware's own words ("Model call limits exceeded: run limit (5/5)") are for
developers; the person gets one sentence in their language, and the thread stays usable
(every tool call of the history is answered, so the next message runs normally).
"""

from __future__ import annotations

import logging
from typing import Any

from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware, hook_config
from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale

log = logging.getLogger(__name__)

#: Marks the message that says a limit ended the run (``additional_kwargs``).
LIMIT_KEY = "clarigate_limit"


def limit_message(kind: str, locale: Locale) -> str:
    """What the person reads when limit ``kind`` (``model_calls``, ``tool_calls``) ended the run."""
    return catalog.text(f"limit_{kind}", locale)


def _reworded(update: dict[str, Any] | None, kind: str, state: Any) -> dict[str, Any] | None:
    """``update`` with its final AI message replaced by the person's sentence."""
    if not update or update.get("jump_to") != "end":
        return update
    messages = list(update.get("messages") or [])
    if messages and isinstance(messages[-1], AIMessage) and not messages[-1].tool_calls:
        log.warning("a run reached its %s limit: %s", kind.replace("_", " "), messages[-1].text)
        messages[-1] = AIMessage(
            content=limit_message(kind, thread_locale(state["messages"])), additional_kwargs={LIMIT_KEY: kind}
        )
    return {**update, "messages": messages}


class ModelCallLimit(ModelCallLimitMiddleware):
    """``max_model_calls`` per run; the run ends with a short message when it is reached."""

    def __init__(self, run_limit: int) -> None:
        super().__init__(run_limit=run_limit, exit_behavior="end")

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:  # type: ignore[override]
        """The middleware's check, in the person's words."""
        return _reworded(super().before_model(state, runtime), "model_calls", state)

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:  # type: ignore[override]
        """Async twin of ``before_model``."""
        return _reworded(super().before_model(state, runtime), "model_calls", state)


class ToolCallLimit(ToolCallLimitMiddleware):
    """``max_tool_calls`` per run (all tools); calls past it are not run and the run ends."""

    def __init__(self, run_limit: int) -> None:
        super().__init__(run_limit=run_limit, exit_behavior="end")

    @hook_config(can_jump_to=["end"])
    def after_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:  # type: ignore[override]
        """The middleware's check, in the person's words."""
        return _reworded(super().after_model(state, runtime), "tool_calls", state)

    @hook_config(can_jump_to=["end"])
    async def aafter_model(self, state: Any, runtime: Runtime) -> dict[str, Any] | None:  # type: ignore[override]
        """Async twin of ``after_model``."""
        return _reworded(super().after_model(state, runtime), "tool_calls", state)
