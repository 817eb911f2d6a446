"""Every tool call in what the model is sent has its result, whatever happened before.

A run that fails or is interrupted after the model called a tool (the tool raised, the
process was stopped) is still saved, so the thread ends with an AI message whose calls
were never answered. OpenAI and Anthropic refuse such a history with a 400 on every
later turn, which would break the thread for good; the model is sent a result saying
the call did not finish instead. The thread itself is left as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, ToolCall, ToolMessage

from clarigate.agent.prompts import CALL_DID_NOT_FINISH


def with_every_call_answered(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with a "did not finish" result after each run of results that lacks one.

    A call counts as answered only by a result in the run of tool messages right after its
    AI message, which is what providers require (an id reused later does not count).
    """
    patched: list[AnyMessage] = []
    open_calls: list[ToolCall] = []  # calls of the last AI message not answered yet

    def close_open_calls() -> None:
        patched.extend(
            ToolMessage(content=CALL_DID_NOT_FINISH, tool_call_id=c["id"], name=c["name"], status="error")
            for c in open_calls
            if c.get("id")
        )
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            open_calls[:] = [c for c in open_calls if c.get("id") != message.tool_call_id]
        else:
            close_open_calls()
        patched.append(message)
        if isinstance(message, AIMessage):
            open_calls.extend(message.tool_calls)
    close_open_calls()
    return patched


class AnswerUnfinishedCallsMiddleware(AgentMiddleware):
    """Sends the model a history in which every tool call has its result."""

    @staticmethod
    def _patched(request: ModelRequest) -> ModelRequest:
        messages = with_every_call_answered(request.messages)
        return request.override(messages=messages) if len(messages) != len(request.messages) else request

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model with unfinished calls answered."""
        return handler(self._patched(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        """Async twin of ``wrap_model_call``."""
        return await handler(self._patched(request))
