"""Every tool call in what the model is sent has its result, whatever happened before.

A run that fails or is interrupted after the model called a tool (the tool raised, the
process was stopped) is still saved, so the thread ends with an AI message whose calls
were never answered. OpenAI and Anthropic refuse such a history with a 400 on every
later turn, which would break the thread for good; the model is sent a result for such a
call instead, saying only what is known, in the language of the conversation: the person
wrote a new message before the call returned (a call followed by their message), or the
run stopped before it returned. The same holds for a tool's image in a provider whose tool
messages take text only: it is sent in a user message instead (``tool_parts``). The thread
itself is left as it is.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolCall, ToolMessage

from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import catalog
from clarigate.agent.tool_parts import keeps_tool_parts, with_tool_parts_after_results


def with_every_call_answered(messages: Sequence[AnyMessage]) -> list[AnyMessage]:
    """``messages`` with a "no result" result after each run of results that lacks one.

    A call counts as answered only by a result in the run of tool messages right after its
    AI message, which is what providers require (an id reused later does not count).
    """
    patched: list[AnyMessage] = []
    open_calls: list[ToolCall] = []  # calls of the last AI message not answered yet

    def close_open_calls(before: AnyMessage | None) -> None:
        if not open_calls:  # the common case, at every message: nothing to say
            return
        key = "call_left_open" if isinstance(before, HumanMessage) else "call_did_not_finish"
        content = catalog.text(key, thread_locale(messages))
        patched.extend(
            ToolMessage(content=content, tool_call_id=c["id"], name=c["name"], status="error")
            for c in open_calls
            if c.get("id")
        )
        open_calls.clear()

    for message in messages:
        if isinstance(message, ToolMessage):
            open_calls[:] = [c for c in open_calls if c.get("id") != message.tool_call_id]
        else:
            close_open_calls(message)
        patched.append(message)
        if isinstance(message, AIMessage):
            open_calls.extend(message.tool_calls)
    close_open_calls(None)
    return patched


class AnswerUnfinishedCallsMiddleware(AgentMiddleware):
    """Sends the model a history in which every tool call has its result, in a shape its
    provider takes (a tool's images where the provider accepts them)."""

    @staticmethod
    def _patched(request: ModelRequest) -> ModelRequest:
        messages = with_every_call_answered(request.messages)
        if not keeps_tool_parts(request.model):
            messages = with_tool_parts_after_results(messages)
        return request.override(messages=messages)  # a copy of the request: cheap, whatever changed

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        """Call the model with unfinished calls answered."""
        return handler(self._patched(request))

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        """Async twin of ``wrap_model_call``."""
        return await handler(self._patched(request))
