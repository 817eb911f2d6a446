"""Prometheus metrics, defined once. Adapters count platform API trouble here too."""

from __future__ import annotations

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
# state: asked | answered | expired
CLARIFICATIONS = Counter("clarigate_clarifications_total", "Clarifications", ["state"])
PLATFORM_API_ERRORS = Counter(
    "clarigate_platform_api_errors_total", "Platform API errors", ["platform", "kind"]
)  # kind: rate_limited | server_error | client_error | network
