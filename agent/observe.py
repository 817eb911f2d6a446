"""What an operator sees of a run: one log line per tool call, token usage per run.

Tool calls are logged with their name, duration and outcome; argument values never
appear at INFO (they may hold personal data or secrets), only at DEBUG.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain_core.messages import ToolMessage

log = logging.getLogger("agent.tools")


def _outcome(result: Any) -> str:
    if isinstance(result, ToolMessage) and result.status == "error":
        return "error"
    return "ok"


class ToolCallLogMiddleware(AgentMiddleware):
    """Logs every tool call the agent runs: name, duration, ok / error."""

    def _log(self, request: Any, started: float, outcome: str) -> None:
        call = request.tool_call
        log.info(
            "tool call %s: %s in %.0f ms", call.get("name"), outcome, (time.perf_counter() - started) * 1000
        )
        log.debug("tool call %s arguments: %r", call.get("name"), call.get("args"))

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Run the call and log it."""
        started = time.perf_counter()
        try:
            result = handler(request)
        except BaseException:
            self._log(request, started, "error")
            raise
        self._log(request, started, _outcome(result))
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Async twin of ``wrap_tool_call``."""
        started = time.perf_counter()
        try:
            result = await handler(request)
        except BaseException:
            self._log(request, started, "error")
            raise
        self._log(request, started, _outcome(result))
        return result


def usage_by_model(raw: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``{model: {"input": n, "output": m}}`` from a ``UsageMetadataCallbackHandler``'s totals."""
    usage: dict[str, dict[str, int]] = {}
    for model, meta in raw.items():
        usage[model or "unknown"] = {
            "input": int(meta.get("input_tokens", 0) or 0),
            "output": int(meta.get("output_tokens", 0) or 0),
        }
    return usage
