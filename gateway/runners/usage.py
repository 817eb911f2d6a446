"""Model calls and tokens of each agent run, seen from outside the agent.

A LangChain configure hook puts ``UsageHandler`` into every LangChain run started while
``run_usage()`` is active, so the gateway counts the model's calls and tokens (by model) for
the metrics and the "run finished" log line without the agent passing anything back.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.tracers.context import register_configure_hook

from clarigate.agent.observe import ModelEventsOnly
from clarigate.gateway.runtime import metrics


@dataclass
class RunUsage:
    """What one agent run used: calls, tokens in and out, the model(s) named by the provider."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    models: list[str] = field(default_factory=list)

    @property
    def model(self) -> str:
        """The model(s) called, comma-separated ("" when none reported a name)."""
        return ",".join(self.models)


#: Whether model events are counted in the event loop (``run_inline``) rather than through the
#: thread pool. The hand-off to a thread is a pause in which an event loop that also serves acks
#: (``role: all``) answers them: taken away, their p99 at 200 events/s with 64 runs went from
#: ~35 to ~90 ms. A process that only runs jobs (a worker process) counts inline: no acks wait,
#: and a burst of 1,000 cost ~2 ms less CPU per message. ``serve`` sets it (``count_inline``).
_INLINE = False


def count_inline(inline: bool = True) -> None:
    """Count model events in the event loop from now on (a process whose loop serves no acks)."""
    global _INLINE
    _INLINE = inline


class UsageHandler(ModelEventsOnly, BaseCallbackHandler):
    """Counts each chat-model call's tokens into one ``RunUsage`` and into the metrics.

    Called for model calls only: a sync handler is otherwise called through a thread pool for
    every event of the run (each graph step's start and end), which cost more CPU than the rest
    of the run's bookkeeping. Inline or through the pool: ``count_inline``.
    """

    def __init__(self, usage: RunUsage, default_model: str) -> None:
        self.run_inline = _INLINE
        self.usage = usage
        self.default_model = default_model
        self._models: dict[Any, str] = {}

    def on_chat_model_start(self, serialized: Any, messages: Any, *, run_id: Any, **kwargs: Any) -> None:
        """Remember the model the call was made with (its invocation parameters name it)."""
        params = kwargs.get("invocation_params") or {}
        self._models[run_id] = str(params.get("model") or params.get("model_name") or self.default_model)

    def on_llm_end(self, response: Any, *, run_id: Any, **kwargs: Any) -> None:
        """Add the call and its token usage (from ``usage_metadata`` when the provider reports it)."""
        model = self._models.pop(run_id, self.default_model)
        tokens_in = tokens_out = 0
        for generations in getattr(response, "generations", []) or []:
            for generation in generations:
                usage = getattr(getattr(generation, "message", None), "usage_metadata", None) or {}
                tokens_in += int(usage.get("input_tokens") or 0)
                tokens_out += int(usage.get("output_tokens") or 0)
        self.usage.calls += 1
        self.usage.input_tokens += tokens_in
        self.usage.output_tokens += tokens_out
        if model not in self.usage.models:
            self.usage.models.append(model)
        metrics.llm_call(model, tokens_in, tokens_out)

    def on_llm_error(self, error: BaseException, *, run_id: Any, **kwargs: Any) -> None:
        """A failed call counts as a call (of its model) with no tokens."""
        model = self._models.pop(run_id, self.default_model)
        self.usage.calls += 1
        metrics.llm_call(model, 0, 0, failed=True)


_handler: ContextVar[UsageHandler | None] = ContextVar("clarigate_llm_usage", default=None)
register_configure_hook(_handler, inheritable=True)


@contextmanager
def run_usage(default_model: str) -> Iterator[RunUsage]:
    """Count the model calls made inside the block (this task and the tasks it starts)."""
    usage = RunUsage()
    token = _handler.set(UsageHandler(usage, default_model))
    try:
        yield usage
    finally:
        _handler.reset(token)
