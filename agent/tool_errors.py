"""A tool that raises is the model's to handle: the error comes back as an error tool message.

LangChain's ``ToolRetryMiddleware`` with no retries turns the exception of any tool the agent
runs into a ``ToolMessage`` with ``status="error"``; the run goes on and the model decides
(another try, another tool, or telling the person). The message holds the exception's type
and the first line of its message only, cut short, with URL credentials masked: no
traceback, no arguments. ``ToolCallLogMiddleware`` logs the failure with the tool's name. A
tool that keeps failing is bounded by ``max_tool_calls`` and ``recursion_limit`` as any tool is.
"""

from __future__ import annotations

import re

from langchain.agents.middleware import ToolRetryMiddleware

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


def tool_errors_to_model() -> ToolRetryMiddleware:
    """Every tool's exception as an error tool message (no retry: a retry is the model's call)."""
    return ToolRetryMiddleware(max_retries=0, retry_on=(Exception,), on_failure=tool_error_text)
