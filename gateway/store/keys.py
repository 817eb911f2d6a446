"""Key layout, lifetimes and record encoding shared by both store implementations.

Both stores name their state the same way (the names below), so an
operator reading Redis and a test reading the embedded store see the same keys.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import Sender

from .records import Job, Payload, PendingRecord

#: The stream's consumer group.
GROUP = "workers"
#: How long "this inbound id has had its reply" is remembered (longer than any platform retry).
DONE_TTL_SECONDS = 2 * 24 * 3600
#: How idle a job handed back by a stopping replica looks (more than any stale-claim time).
RELEASED_IDLE_SECONDS = 24 * 3600
#: How long turnstile counters with jobs outstanding live (refreshed by every accept and completion).
ORDER_TTL_SECONDS = 30 * 24 * 3600

#: Record fields stored as JSON in the record's hash; the others are plain strings.
JSON_FIELDS = ("message_ref", "answered_by", "response", "request", "conversation", "asked_by")


class StoreKeys:
    """The names of every key under one bot prefix."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.jobs = f"{prefix}:jobs"
        self.cleanup = f"{prefix}:cleanup"  # agent thread -> when its checkpoints may be deleted
        self.open_asks = f"{prefix}:asks"  # open clarifications' request ids by creation time

    def thread(self, thread_key: str) -> str:
        """Chat thread -> agent thread."""
        return f"{self.prefix}:thread:{thread_key}"

    def seen(self, dedupe_key: str) -> str:
        """Dedupe marker of one delivery (also used by ``first_time``)."""
        return f"{self.prefix}:seen:{dedupe_key}"

    def ask(self, request_id: str) -> str:
        """A pending (or answered) clarification record."""
        return f"{self.prefix}:ask:{request_id}"

    def token(self, token: str) -> str:
        """Button token -> request id."""
        return f"{self.prefix}:tok:{token}"

    def pending(self, thread_id: str) -> str:
        """Agent thread -> its open request id."""
        return f"{self.prefix}:pending:{thread_id}"

    def seq(self, order_key: str) -> str:
        """Turnstile: the last sequence number handed out for an order key."""
        return f"{self.prefix}:seq:{order_key}"

    def next(self, order_key: str) -> str:
        """Turnstile: the last sequence number completed for an order key."""
        return f"{self.prefix}:next:{order_key}"

    def done(self, inbound_id: str) -> str:
        """Marker that an inbound id had its reply."""
        return f"{self.prefix}:done:{inbound_id}"

    def delivery(self, inbound_id: str) -> str:
        """A job's recorded outputs and their delivery outcomes (a hash)."""
        return f"{self.prefix}:out:{inbound_id}"

    def state(self, key: str) -> str:
        """Adapter state (JSON)."""
        return f"{self.prefix}:state:{key}"

    def votes(self, answer: str) -> str:
        """The votes on one answer (a hash: person -> vote)."""
        return f"{self.prefix}:votes:{answer}"

    def lease(self, name: str) -> str:
        """A lease held by one replica."""
        return f"{self.prefix}:lease:{name}"


def new_thread_id(now: float | None = None) -> str:
    """A fresh agent thread id: 32 hex digits laid out as a UUIDv7 (RFC 9562) without dashes.

    The first 48 bits are the creation time in milliseconds (``/status`` tells the thread's
    age from them), a ``7`` marks the layout, the rest (76 bits) is random.
    """
    millis = int((time.time() if now is None else now) * 1000) & (1 << 48) - 1
    return f"{millis:012x}7{os.urandom(10).hex()[:19]}"


#: Thread ids from before the time was kept in them have no creation time; these bounds keep a
#: random old id that happens to look like one from passing for it.
_EARLIEST_THREAD = 1_704_067_200  # 2024-01-01


def thread_started_at(thread_id: str, now: float | None = None) -> float | None:
    """When ``new_thread_id`` made ``thread_id`` (unix seconds), or None if it cannot tell."""
    if len(thread_id) != 32 or thread_id[12] != "7":
        return None
    try:
        started = int(thread_id[:12], 16) / 1000
    except ValueError:
        return None
    latest = (time.time() if now is None else now) + 60
    return started if _EARLIEST_THREAD <= started <= latest else None


def call_mark() -> str:
    """A value unique to one call, by which a retried call recognizes its own earlier effect."""
    return os.urandom(8).hex()


def to_millis(seconds: float) -> int:
    """A TTL in whole milliseconds, at least 1 (Redis refuses 0)."""
    return max(1, int(seconds * 1000))


def compact_json(value: Any) -> str:
    """JSON without spaces, as stored."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def encode_record(record: PendingRecord) -> list[str]:
    """A record as the flat ``[field, value, …]`` of its hash (``None`` fields left out).

    Objects are JSON in their own field and the scalars plain text, so a script sets the answer or
    the message reference with ``HSET`` and reads ``thread_id`` with ``HGET``, never splicing JSON,
    and an operator reads the record with ``HGETALL``.
    """
    flat: list[str] = []
    for name, value in record.model_dump(mode="json").items():
        if value is None:
            continue
        if name in JSON_FIELDS:
            value = compact_json(value)
        flat += [name, value if isinstance(value, str) else repr(value)]
    return flat


def answered_fields(answered_by: Sender, response: HumanInputResponse) -> list[str]:
    """The JSON of the fields a claim sets: ``answered_by`` and ``response``."""
    return [answered_by.model_dump_json(), response.model_dump_json()]


def decode_record(raw: list[str] | dict[str, str] | str | None) -> PendingRecord | None:
    """A record from its hash (``HGETALL``'s flat list or a mapping); None when empty or missing."""
    if not raw:
        return None
    fields = dict(zip(raw[::2], raw[1::2], strict=True)) if isinstance(raw, list) else raw
    if not isinstance(fields, dict):
        return None
    values: dict[str, Any] = {
        name: json.loads(value) if name in JSON_FIELDS else value for name, value in fields.items()
    }
    return PendingRecord.model_validate(values)


def still_open(record: PendingRecord | None) -> PendingRecord | None:
    """``record`` while it waits for its answer; None once answered (or when there is none)."""
    return record if record is not None and record.status == "pending" else None


def payload_text(payload: Payload) -> str:
    """A job's payload as stored: JSON text (given as such, or encoded here)."""
    return payload if isinstance(payload, str) else compact_json(payload)


def job_fields(kind: str, inbound_id: str, order_key: str, seq: int, payload: Payload) -> dict[str, str]:
    """The stream entry fields of one job."""
    return {
        "kind": kind,
        "inbound_id": inbound_id,
        "order_key": order_key,
        "seq": str(seq),
        "payload": payload_text(payload),
    }


def job_from_fields(entry_id: str, fields: dict[str, str], deliveries: int = 1) -> Job:
    """A job from its stream entry."""
    return Job(
        entry_id,
        fields["kind"],  # type: ignore[arg-type]
        fields["inbound_id"],
        fields["order_key"],
        int(fields["seq"]),
        fields.get("payload") or "{}",
        deliveries,
    )
