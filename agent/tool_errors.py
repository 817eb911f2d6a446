"""A tool that raises is the model's to handle: the error comes back as an error tool message.

LangChain's ``ToolRetryMiddleware`` with no retries turns the exception of any tool the agent
runs into a ``ToolMessage`` with ``status="error"``; the run goes on and the model decides
(another try, another tool, or telling the person). The message holds the exception's type
and the first line of its message only, cut short, with URL credentials masked: no
traceback, no arguments. ``ToolCallLogMiddleware`` logs the failure with the tool's name. A
tool that keeps failing is bounded by ``max_tool_calls`` and ``recursion_limit`` as any tool is.

A call its MCP server could not take (``ToolServerUnavailable``: down, backing off, or its
connection closed, the probe after a wait included) reads the same every time, in the thread's
language: which tool server is unavailable, and that the model may try again later or go on
without it (the catalog's ``tool_server_unavailable``; for a call in flight as the connection
closed, ``tool_server_closed``: whether it took effect is not known), never the SDK's exception. A tool's own
error answer (``isError``) is not that: it reads as its server wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from typing import Any

from langchain.agents.middleware import ToolRetryMiddleware
from langchain_core.messages import ToolMessage
from langgraph.prebuilt.tool_node import ToolCallRequest

from clarigate.agent.mcp import ToolServerUnavailable
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import catalog

#: How much of an exception's message the model reads.
MAX_ERROR_CHARS = 300
_URL_CREDENTIALS = re.compile(r"(://[^:/@\s]*:)[^@\s/]+@")


def tool_error_text(exc: Exception) -> str:
    """``ValueError: table locked``: the type and the first line of the message, cut, masked."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    message = _URL_CREDENTIALS.sub(r"\1***@", lines[0]) if lines else ""
    if len(message) > MAX_ERROR_CHARS:
        message = message[: MAX_ERROR_CHARS - 1] + "…"
    name = type(exc).__name__
    return f"{name}: {message}" if message else name


def unavailable_text(request: ToolCallRequest, exc: ToolServerUnavailable) -> ToolMessage:
    """The error tool message for a call whose tool server is unavailable."""
    messages = request.state.get("messages", []) if isinstance(request.state, dict) else []
    key = "tool_server_closed" if exc.in_flight else "tool_server_unavailable"
    content = catalog.text(key, thread_locale(messages), server=exc.server)
    call = request.tool_call
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status="error")


class ToolErrorsToModel(ToolRetryMiddleware):
    """``ToolRetryMiddleware`` with no retries, a call its server could not take read plainly."""

    def __init__(self) -> None:
        super().__init__(max_retries=0, retry_on=(Exception,), on_failure=tool_error_text)

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Any]) -> Any:
        def plainly(request: ToolCallRequest) -> Any:
            try:
                return handler(request)
            except ToolServerUnavailable as exc:
                return unavailable_text(request, exc)

        return super().wrap_tool_call(request, plainly)

    async def awrap_tool_call(self, request: ToolCallRequest, handler: Callable[..., Awaitable[Any]]) -> Any:
        async def plainly(request: ToolCallRequest) -> Any:
            try:
                return await handler(request)
            except ToolServerUnavailable as exc:
                return unavailable_text(request, exc)

        return await super().awrap_tool_call(request, plainly)


def tool_errors_to_model() -> ToolRetryMiddleware:
    """Every tool's exception as an error tool message (no retry: a retry is the model's call)."""
    return ToolErrorsToModel()
