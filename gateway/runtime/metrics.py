"""Prometheus metrics, defined once. Adapters count platform API trouble here too.

The series counted on every message are bound to their labels once: a ``labels()`` lookup
costs more than the increment, and bound series are exported (at 0) before the first event,
so rate() and ratio alerts see them from the start.
"""

from __future__ import annotations

import time
from functools import cache

from prometheus_client import Counter, Gauge, Histogram

INBOUND_EVENTS = Counter("clarigate_inbound_events_total", "Inbound events", ["platform", "kind"])
DUPLICATES_DROPPED = Counter(
    "clarigate_duplicates_dropped_total", "Duplicate deliveries dropped", ["platform"]
)
RUNS = Counter("clarigate_runs_total", "Agent runs", ["state"])  # started | finished | failed | stopped
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
# limit: model_calls | tool_calls | recursion
RUN_LIMITS = Counter("clarigate_run_limits_total", "Agent runs ended by a limit", ["limit"])
# outcome: sent | fallback (a question sent as its text fallback, a file refused for good replaced
# by the line saying so); abandoned ones (a fallback refused in turn among them) are counted
# in clarigate_deliveries_given_up_total{platform}, or in clarigate_deliveries_recipient_gone_total{platform}
# when the recipient refuses the bot
DELIVERIES = Counter("clarigate_deliveries_total", "Replies, questions and errors delivered", ["outcome"])
# a worker process that exited unasked (started again until too many die: runtime/supervise.py)
WORKER_PROCESS_DEATHS = Counter(
    "clarigate_worker_process_deaths_total", "Worker processes that exited unasked"
)
DELIVERY_RETRIES = Counter(
    "clarigate_delivery_retries_total", "Deliveries retried after a transient platform failure"
)

RUNS_STARTED = RUNS.labels(state="started")
RUNS_FINISHED = RUNS.labels(state="finished")
RUNS_FAILED = RUNS.labels(state="failed")
RUNS_STOPPED = RUNS.labels(state="stopped")  # by /cancel, Slack's Stop, a terminal's Ctrl-C
ASKED = CLARIFICATIONS.labels(state="asked")
ANSWERED = CLARIFICATIONS.labels(state="answered")
DECLINED = CLARIFICATIONS.labels(state="declined")
EXPIRED = CLARIFICATIONS.labels(state="expired")
DELIVERED = DELIVERIES.labels(outcome="sent")
DELIVERED_AS_TEXT = DELIVERIES.labels(outcome="fallback")


@cache
def inbound_events(platform: str, kind: str) -> Counter:
    """The inbound-events series of one platform and kind (``message`` or ``answer``)."""
    return INBOUND_EVENTS.labels(platform=platform, kind=kind)


# feedback under final answers: votes given, and votes a person's later click replaced (given minus
# withdrawn is what stands); vote: up | down
FEEDBACK = Counter("clarigate_feedback_total", "Votes given on answers", ["platform", "vote"])
FEEDBACK_WITHDRAWN = Counter(
    "clarigate_feedback_withdrawn_total", "Votes on answers replaced by the other vote", ["platform", "vote"]
)


@cache
def feedback_given(platform: str, vote: str) -> Counter:
    """The votes-given series of one platform and vote."""
    return FEEDBACK.labels(platform=platform, vote=vote)


@cache
def feedback_withdrawn(platform: str, vote: str) -> Counter:
    """The votes-withdrawn series of one platform and vote."""
    return FEEDBACK_WITHDRAWN.labels(platform=platform, vote=vote)


@cache
def duplicates_dropped(platform: str) -> Counter:
    """The dropped-duplicates series of one platform."""
    return DUPLICATES_DROPPED.labels(platform=platform)


# --- operations: what an on-call acts on (deploy/prometheus/alerts.yaml) ---------------------
# Every series gets the bot's ``bot`` label at exposition (``runtime.ops.exposition``), so several
# bots share one Prometheus without each series being defined with it. Under ``serve`` every
# process of a replica counts into one directory (prometheus-client's multiprocess mode):
# counters and histograms add up; a gauge is set by the one process it describes, so the
# replica's value is the largest among the live processes (``livemax``), except jobs in flight,
# which each worker process counts for its own jobs (``livesum``).

STREAM_BACKLOG = Gauge(
    "clarigate_stream_backlog", "Jobs in the stream not yet read by any worker", multiprocess_mode="livemax"
)
STREAM_OLDEST_SECONDS = Gauge(
    "clarigate_stream_oldest_age_seconds",
    "Age of the oldest job not yet completed (0: none)",
    multiprocess_mode="livemax",
)
STREAM_PENDING = Gauge(
    "clarigate_stream_pending", "Jobs read by a worker and not yet completed", multiprocess_mode="livemax"
)
JOBS_IN_FLIGHT = Gauge(
    "clarigate_jobs_in_flight",
    "Jobs this replica holds (running or waiting for their turn)",
    multiprocess_mode="livesum",
)
PENDING_CLARIFICATIONS = Gauge(
    "clarigate_pending_clarifications", "Open clarifications by age", ["age"], multiprocess_mode="livemax"
)  # age: lt_1h | 1h_to_1d | gt_1d
STORE_ERRORS = Counter("clarigate_store_errors_total", "Failed store (Redis) calls", ["operation"])
CHECKPOINTER_ERRORS = Counter("clarigate_checkpointer_errors_total", "Failed checkpointer checks or runs")
RECEIVE_TO_REPLY = Histogram(
    "clarigate_receive_to_reply_seconds",
    "From a message's arrival in the stream to its first reply",
    buckets=(0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600),
)
JOBS_GIVEN_UP = Counter("clarigate_jobs_given_up_total", "Jobs given up without a reply after every retry")
DELIVERIES_GIVEN_UP = Counter(
    "clarigate_deliveries_given_up_total", "Replies that could not be delivered", ["platform"]
)
# not a failure: the recipient refuses the bot (blocked it, deactivated, removed it from the chat;
# ``DeliveryFailed.chat_refused``), so these are kept out of the given-up count and its alert
DELIVERIES_RECIPIENT_GONE = Counter(
    "clarigate_deliveries_recipient_gone_total",
    "Replies not delivered because the recipient refuses the bot (blocked it, removed it)",
    ["platform"],
)
DELIVERIES_FOUND = Counter(
    "clarigate_deliveries_found_total",
    "Unproven replies found on the platform already (sent before a crash), so not sent again",
    ["platform"],
)
LIVE_UPDATES = Counter(
    "clarigate_live_updates_total", "Updates of live messages (streamed replies, progress)", ["platform"]
)
LIVE_UPDATES_FAILED = Counter(
    "clarigate_live_updates_failed_total",
    "Live messages that stopped updating after a failed call (the reply still follows)",
    ["platform"],
)
LLM_CALLS = Counter("clarigate_llm_calls_total", "Model calls", ["model", "outcome"])  # ok | error
LLM_TOKENS = Counter("clarigate_llm_tokens_total", "Model tokens", ["model", "direction"])  # input | output
PLATFORM_CONNECTED = Gauge(
    "clarigate_platform_connected",
    "1 while a platform's receiver is connected (0: down)",
    ["platform"],
    multiprocess_mode="livemax",
)
WORKER_LOOP_UP = Gauge(
    "clarigate_worker_loop_up",
    "1 while a worker loop works (0: failing or dead)",
    ["loop"],
    multiprocess_mode="livemax",
)
HTTP_LATENCY = Histogram(
    "clarigate_http_request_seconds",
    "Time to the response's first byte (the platform's ack latency on webhook routes)",
    ["route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5),
)
HTTP_RESPONSES = Counter("clarigate_http_responses_total", "HTTP responses", ["route", "status"])
# route: a served path, or "other"; bad requests (4xx) are not errors here
HTTP_ERRORS = Counter(
    "clarigate_http_errors_total", "Requests answered 500: an endpoint raised something unexpected", ["route"]
)


@cache
def http_errors(route: str) -> Counter:
    """The failed-requests series of one route."""
    return HTTP_ERRORS.labels(route=route)


# the store (Redis) unreachable while a webhook was handled: answered 503 with Retry-After, an outage
HTTP_UNAVAILABLE = Counter(
    "clarigate_http_unavailable_total", "Requests answered 503: the store could not be reached", ["route"]
)


@cache
def http_unavailable(route: str) -> Counter:
    """The requests-answered-503 series of one route."""
    return HTTP_UNAVAILABLE.labels(route=route)


# the platform's last delivery of a message met by a store outage: kept on disk, queued once it is back
KEPT_ON_DISK = Counter(
    "clarigate_kept_on_disk_total",
    "Messages kept on the replica's disk: the store unreachable at the platform's last delivery",
    ["platform"],
)


@cache
def kept_on_disk(platform: str) -> Counter:
    """The kept-on-disk series of one platform."""
    return KEPT_ON_DISK.labels(platform=platform)


def llm_call(model: str, tokens_in: int, tokens_out: int, failed: bool = False) -> None:
    """Count one model call and its tokens."""
    LLM_CALLS.labels(model=model, outcome="error" if failed else "ok").inc()
    if tokens_in:
        LLM_TOKENS.labels(model=model, direction="input").inc(tokens_in)
    if tokens_out:
        LLM_TOKENS.labels(model=model, direction="output").inc(tokens_out)


def observe_receive_to_reply(entry_id: str) -> None:
    """Observe the time since the stream entry ``entry_id`` (``<ms>-<seq>``) was added."""
    ms, _, _ = entry_id.partition("-")
    if ms.isdigit():
        RECEIVE_TO_REPLY.observe(max(time.time() - int(ms) / 1000, 0.0))


# the LangGraph server runner (agent.server_url)
AGENT_SERVER_ERRORS = Counter(
    "clarigate_agent_server_errors_total",
    "Failures talking to the LangGraph server (unavailable, or a run that did not succeed)",
    ["kind"],
)
AGENT_SERVER_RUN_SECONDS = Histogram(
    "clarigate_agent_server_run_seconds", "Time from a server run's start to its end, as followed"
)
