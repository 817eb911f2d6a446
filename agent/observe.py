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
from langchain_core.callbacks import UsageMetadataCallbackHandler
from langchain_core.messages import ToolMessage

log = logging.getLogger("clarigate.agent.tools")


def _outcome(result: Any) -> str:
    if isinstance(result, ToolMessage) and result.status == "error":
        return "error"
    return "ok"


class ToolCallLogMiddleware(AgentMiddleware):
    """Logs every tool call the agent runs: name, duration, ok / error."""

    def _log(self, request: Any, started: float, outcome: str, result: Any = None) -> None:
        call = request.tool_call
        elapsed = (time.perf_counter() - started) * 1000
        if isinstance(result, ToolMessage) and result.status == "error":
            # what the model reads of the failure (``clarigate.agent.tool_errors``): no arguments
            log.warning("tool call %s: error in %.0f ms: %s", call.get("name"), elapsed, result.text[:300])
        else:
            log.info("tool call %s: %s in %.0f ms", call.get("name"), outcome, elapsed)
        # the arguments' names only: their values may hold what people wrote (kept out of logs)
        args = call.get("args")
        log.debug(
            "tool call %s arguments: %s", call.get("name"), sorted(args) if isinstance(args, dict) else "?"
        )

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        """Run the call and log it."""
        started = time.perf_counter()
        try:
            result = handler(request)
        except BaseException:
            self._log(request, started, "error")
            raise
        self._log(request, started, _outcome(result), result)
        return result

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        """Async twin of ``wrap_tool_call``."""
        started = time.perf_counter()
        try:
            result = await handler(request)
        except BaseException:
            self._log(request, started, "error")
            raise
        self._log(request, started, _outcome(result), result)
        return result


class ModelEventsOnly:
    """A callback handler mixin that asks LangChain for model events only.

    A plain (sync) callback handler is called through a thread pool for every event of a run:
    each graph step's chain start and end, tool calls, retries. Handlers that count what models
    spend need none of that.
    """

    @property
    def ignore_chain(self) -> bool:
        """Graph steps: nothing to count."""
        return True

    @property
    def ignore_agent(self) -> bool:
        """Tool calls: nothing to count."""
        return True

    @property
    def ignore_retriever(self) -> bool:
        """Retrievers: nothing to count."""
        return True

    @property
    def ignore_retry(self) -> bool:
        """Retries: nothing to count."""
        return True

    @property
    def ignore_custom_event(self) -> bool:
        """Custom events: nothing to count."""
        return True

    async def on_llm_new_token(self, token: Any, **kwargs: Any) -> None:
        """Streamed tokens: nothing to count. A coroutine, so that LangChain calls it in the event
        loop: a handler not ``run_inline`` would otherwise cost a thread-pool hop per token."""


class RunUsageHandler(ModelEventsOnly, UsageMetadataCallbackHandler):
    """LangChain's token tally, called in the event loop and only for model results.

    Lacking ``on_chat_model_start``, it would also get each model call's whole history
    formatted as text: ``on_llm_end`` alone carries the usage, counted inline (it only adds
    numbers under a lock).
    """

    run_inline = True

    @property
    def ignore_chat_model(self) -> bool:
        """A model call's start: nothing to count (its end, ``on_llm_end``, carries the usage)."""
        return True


async def _inline_unless_tracing(default: Any, ctx: Any, func: Any, /, *args: Any, **kwargs: Any) -> Any:
    """LangSmith's bookkeeping around each traced step, run where it is called while tracing is off.

    LangChain's agents wrap every middleware hook in ``langsmith.traceable``, which hands its
    set-up and tear-down to a thread pool on every call, tracing on or off: two thread hops per
    model call per middleware. Off, the bookkeeping is a few dictionary reads; on, it stays on
    the thread pool as LangSmith does it.
    """
    from langsmith.utils import tracing_is_enabled

    if tracing_is_enabled():
        return await default(ctx, func, *args, **kwargs)
    return ctx.run(func, *args, **kwargs)


def keep_untraced_steps_inline() -> None:
    """Install ``_inline_unless_tracing`` as LangSmith's ``aio_to_thread`` (its documented runtime
    override), once per process; an override someone else installed is left alone."""
    import langsmith

    try:
        from langsmith._runtime_overrides import get_runtime_overrides

        current = get_runtime_overrides().aio_to_thread
    except ImportError:  # pragma: no cover - a LangSmith without the getter: ours or none
        current = None
    if current is None:
        langsmith.set_runtime_overrides(aio_to_thread=_inline_unless_tracing)


def usage_by_model(raw: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """``{model: {"input": n, "output": m}}`` from a ``UsageMetadataCallbackHandler``'s totals."""
    usage: dict[str, dict[str, int]] = {}
    for model, meta in raw.items():
        usage[model or "unknown"] = {
            "input": int(meta.get("input_tokens", 0) or 0),
            "output": int(meta.get("output_tokens", 0) or 0),
        }
    return usage
