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
from langchain_core.messages import AIMessage, AnyMessage, ToolMessage

from agent.prompts import CALL_DID_NOT_FINISH


def with_every_call_answered(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with a "did not finish" result after each run of results that lacks one."""
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    patched: list[AnyMessage] = []
    missing: list[ToolMessage] = []
    for message in messages:
        if missing and not isinstance(message, ToolMessage):
            patched += missing  # after the results the calls did get
            missing = []
        patched.append(message)
        if isinstance(message, AIMessage):
            missing = [
                ToolMessage(
                    content=CALL_DID_NOT_FINISH,
                    tool_call_id=call["id"],
                    name=call["name"],
                    status="error",
                )
                for call in message.tool_calls
                if call.get("id") and call["id"] not in answered
            ]
    return patched + missing


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
