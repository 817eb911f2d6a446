"""Prometheus metrics, defined once. Adapters count platform API trouble here too.

The series counted on every message are bound to their labels once: a ``labels()`` lookup
costs more than the increment, and bound series are exported (at 0) before the first event,
so rate() and ratio alerts see them from the start.
"""

from __future__ import annotations

from functools import cache

from prometheus_client import Counter, Histogram

INBOUND_EVENTS = Counter("clarigate_inbound_events_total", "Inbound events", ["platform", "kind"])
DUPLICATES_DROPPED = Counter(
    "clarigate_duplicates_dropped_total", "Duplicate deliveries dropped", ["platform"]
)
RUNS = Counter("clarigate_runs_total", "Agent runs", ["state"])  # started | finished | failed
RUN_LATENCY = Histogram(
    "clarigate_run_seconds",
    "Agent run latency",
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)
# state: asked | answered | declined (cancelled, superseded by a new message, closed by /new) | expired
CLARIFICATIONS = Counter("clarigate_clarifications_total", "Clarifications", ["state"])
PLATFORM_API_ERRORS = Counter(
    "clarigate_platform_api_errors_total", "Platform API errors", ["platform", "kind"]
)  # kind: rate_limited | server_error | client_error | network

# kind: input | output; model: the LLM_MODEL (or agent.graph) the tokens went to, as the provider names it
MODEL_TOKENS = Counter("clarigate_model_tokens_total", "Model tokens used by agent runs", ["model", "kind"])
# limit: model_calls | tool_calls | recursion
RUN_LIMITS = Counter("clarigate_run_limits_total", "Agent runs ended by a limit", ["limit"])

RUNS_STARTED = RUNS.labels(state="started")
RUNS_FINISHED = RUNS.labels(state="finished")
RUNS_FAILED = RUNS.labels(state="failed")
ASKED = CLARIFICATIONS.labels(state="asked")
ANSWERED = CLARIFICATIONS.labels(state="answered")
DECLINED = CLARIFICATIONS.labels(state="declined")
EXPIRED = CLARIFICATIONS.labels(state="expired")


@cache
def inbound_events(platform: str, kind: str) -> Counter:
    """The inbound-events series of one platform and kind (``message`` or ``answer``)."""
    return INBOUND_EVENTS.labels(platform=platform, kind=kind)


@cache
def duplicates_dropped(platform: str) -> Counter:
    """The dropped-duplicates series of one platform."""
    return DUPLICATES_DROPPED.labels(platform=platform)


def count_tokens(usage: dict[str, dict[str, int]]) -> None:
    """Add one run's token usage (``{model: {"input": n, "output": m}}``) to the counters."""
    for model, spent in usage.items():
        for kind in ("input", "output"):
            if spent.get(kind):
                MODEL_TOKENS.labels(model=model, kind=kind).inc(spent[kind])
