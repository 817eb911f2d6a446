"""The embedded store: the same semantics as ``RedisStore`` for one process, in memory.

Every method runs without awaiting in between its reads and writes, so each is
atomic on the event loop just as a Lua script is atomic in Redis. Keys are named
as in Redis (``StoreKeys``) and expire by a clock that tests may replace.
"""

from __future__ import annotations

import asyncio
import copy
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import MessageRef, Sender

from .base import ChatStatus, ClaimResult, DeliveryRecord, HoldStatus, Job, Payload, PendingRecord, Store
from .keys import (
    DONE_TTL_SECONDS,
    ORDER_TTL_SECONDS,
    RELEASED_IDLE_SECONDS,
    StoreKeys,
    job_fields,
    job_from_fields,
    new_thread_id,
    still_open,
)


@dataclass
class _Held:
    """A delivered, not yet acknowledged entry (a row of the pending-entries list)."""

    consumer: str
    delivered_at: float
    deliveries: int


class MemoryStore(Store):
    """All gateway state in process memory; for a single gateway process."""

    def __init__(self, prefix: str = "clarigate", *, clock: Callable[[], float] = time.time) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0  # nothing leaves the process; kept for symmetry with RedisStore
        self._clock = clock
        self._values: dict[str, tuple[Any, float | None]] = {}  # key -> (value, expires at)
        self._writes_since_sweep = 0
        self._entries: dict[str, dict[str, str]] = {}  # the stream, in append order
        self._undelivered: list[str] = []  # entry ids not yet read by the group
        self._held: dict[str, _Held] = {}  # entry id -> who holds it
        self._entry_counter = 0
        self._appended = asyncio.Event()
        self._consumers: dict[str, float] = {}  # consumer -> when it was last heard from
        self._cleanup: dict[str, float] = {}  # agent thread -> when its checkpoints may go

    # --- keys with expiry ---------------------------------------------------------------------
    def _get(self, key: str) -> Any | None:
        item = self._values.get(key)
        if item is None:
            return None
        value, expires_at = item
        if expires_at is not None and expires_at <= self._clock():
            del self._values[key]
            return None
        return value

    def _set(
        self, key: str, value: Any, ttl_seconds: float | None = None, *, at: float | None = None
    ) -> None:
        expires_at = at if at is not None else (None if ttl_seconds is None else self._clock() + ttl_seconds)
        self._values[key] = (value, expires_at)
        self._writes_since_sweep += 1
        if self._writes_since_sweep > max(1024, len(self._values) // 4):
            self._sweep()

    def _sweep(self) -> None:
        """Drop expired keys nobody reads again (dedupe markers, done markers), amortized over writes."""
        now = self._clock()
        expired = [key for key, (_, at) in self._values.items() if at is not None and at <= now]
        for key in expired:
            del self._values[key]
        self._writes_since_sweep = 0

    def _expires_at(self, key: str) -> float | None:
        return self._values[key][1] if self._get(key) is not None else None

    def _refresh(self, key: str, ttl_seconds: float) -> None:
        value = self._get(key)
        if value is not None:
            self._set(key, value, ttl_seconds)

    # --- chat thread -> agent thread ---------------------------------------------------------
    async def thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """The agent thread for a chat thread, made on first use; refreshes the TTL."""
        key = self.keys.thread(thread_key)
        thread_id = self._get(key) or new_thread_id()
        self._set(key, thread_id, ttl_seconds)
        return thread_id

    async def new_thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """Start a fresh agent thread for this chat thread (``/new``)."""
        thread_id = new_thread_id()
        self._set(self.keys.thread(thread_key), thread_id, ttl_seconds)
        return thread_id

    def adopt_thread(self, thread_key: str, thread_id: str, ttl_seconds: int) -> None:
        """Map a chat thread to an agent thread kept from before (the terminal chat's thread file:
        this store starts empty on every run, the agent's checkpoints do not)."""
        self._set(self.keys.thread(thread_key), thread_id, ttl_seconds)

    async def has_thread(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread."""
        return self._get(self.keys.thread(thread_key)) is not None

    async def thread_of_chat(self, thread_key: str) -> str | None:
        """The agent thread of a chat thread, or None; makes none and leaves the TTL alone."""
        thread_id = self._get(self.keys.thread(thread_key))
        return str(thread_id) if thread_id is not None else None

    async def chat_status(self, thread_key: str) -> ChatStatus:
        """The agent thread, its open clarification and the outstanding jobs; changes nothing."""
        thread_id = await self.thread_of_chat(thread_key)
        pending = await self.pending_for_thread(thread_id) if thread_id else None
        handed_out = int(self._get(self.keys.seq(thread_key)) or 0)
        completed = int(self._get(self.keys.next(thread_key)) or 0)
        return ChatStatus(thread_id, pending, max(handed_out - completed, 0))

    # --- accept --------------------------------------------------------------------------------
    async def accept_job(
        self,
        dedupe_key: str,
        kind: str,
        inbound_id: str,
        order_key: str,
        payload: Payload,
        seen_ttl: int,
    ) -> bool:
        """Mark the delivery seen and append its job; False (nothing appended) when seen before."""
        if not await self.first_time(dedupe_key, seen_ttl):
            return False
        self._append(kind, inbound_id, order_key, payload)
        return True

    def _append(self, kind: str, inbound_id: str, order_key: str, payload: Payload) -> None:
        seq_key, next_key = self.keys.seq(order_key), self.keys.next(order_key)
        seq = int(self._get(seq_key) or 0) + 1
        self._set(seq_key, seq, ORDER_TTL_SECONDS)
        self._refresh(next_key, ORDER_TTL_SECONDS)
        self._entry_counter += 1
        entry_id = f"{int(self._clock() * 1000)}-{self._entry_counter}"
        self._entries[entry_id] = job_fields(kind, inbound_id, order_key, seq, payload)
        self._undelivered.append(entry_id)
        self._appended.set()

    async def forget(self, dedupe_key: str) -> None:
        """Release a dedupe key so a redelivery is processed again."""
        self._values.pop(self.keys.seen(dedupe_key), None)

    async def first_time(self, key: str, ttl_seconds: int) -> bool:
        """True the first time ``key`` is set within its TTL (shares ``seen:`` with dedupe keys)."""
        seen = self.keys.seen(key)
        if self._get(seen) is not None:
            return False
        self._set(seen, "1", ttl_seconds)
        return True

    # --- pending clarifications ---------------------------------------------------------------
    async def save_pending(self, record: PendingRecord) -> None:
        """Store the record, its token and the thread's pending pointer until ``expires_at``."""
        at = record.expires_at
        self._set(self.keys.ask(record.request_id), record.model_copy(deep=True), at=at)
        self._set(self.keys.token(record.token), record.request_id, at=at)
        self._set(self.keys.pending(record.thread_id), record.request_id, at=at)

    def _record(self, request_id: str | None) -> PendingRecord | None:
        record = self._get(self.keys.ask(request_id)) if request_id else None
        return record.model_copy(deep=True) if record is not None else None

    async def get_pending(self, request_id: str) -> PendingRecord | None:
        """The record (pending or answered), or None once expired."""
        return self._record(request_id)

    async def pending_for_token(self, token: str) -> PendingRecord | None:
        """The record behind a button token."""
        return self._record(self._get(self.keys.token(token)))

    async def pending_for_thread(self, thread_id: str) -> PendingRecord | None:
        """The open clarification of an agent thread, if any."""
        return still_open(self._record(self._get(self.keys.pending(thread_id))))

    async def set_message_ref(self, request_id: str, ref: MessageRef) -> None:
        """Remember the message that shows the request."""
        key = self.keys.ask(request_id)
        record = self._get(key)
        if record is not None:
            self._set(key, record.model_copy(update={"message_ref": ref}), at=self._expires_at(key))

    async def claim_answer(
        self,
        request_id: str,
        answered_by: Sender,
        response: HumanInputResponse,
        followup: tuple[str, str, Payload] | None = None,
        *,
        seen: tuple[str, int] | None = None,
        current_in: str | None = None,
    ) -> ClaimResult:
        """Mark the request answered once and append its follow-up job in the same step."""
        key = self.keys.ask(request_id)
        record: PendingRecord | None = self._get(key)
        if seen is not None and not await self.first_time(*seen):
            return ClaimResult(status="duplicate", record=record.model_copy(deep=True) if record else None)
        if record is None:
            return ClaimResult(status="missing")
        if record.status != "pending":
            return ClaimResult(status="already_answered", record=record.model_copy(deep=True))
        current = self._get(self.keys.thread(current_in)) if current_in is not None else None
        if current is not None and current != record.thread_id:
            return ClaimResult(status="restarted", record=record.model_copy(deep=True))
        answered = record.model_copy(
            update={"status": "answered", "answered_by": answered_by, "response": response}
        )
        self._set(key, answered, at=self._expires_at(key))
        pointer = self.keys.pending(record.thread_id)
        if self._get(pointer) == request_id:
            del self._values[pointer]
        if followup is not None:
            inbound_id, order_key, payload = followup
            self._append("answer", inbound_id, order_key, copy.deepcopy(payload))
        return ClaimResult(status="claimed", record=answered.model_copy(deep=True))

    # --- work queue ---------------------------------------------------------------------------
    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for this consumer, waiting up to ``block_ms`` (0: do not wait)."""
        self._consumers[consumer] = self._clock()
        deadline = asyncio.get_running_loop().time() + block_ms / 1000
        while True:
            jobs = self._deliver(consumer, count)
            remaining = deadline - asyncio.get_running_loop().time()
            if jobs or remaining <= 0:
                return jobs
            self._appended.clear()
            try:
                async with asyncio.timeout(remaining):  # not wait_for: it can swallow a cancellation
                    await self._appended.wait()
            except TimeoutError:
                return self._deliver(consumer, count)

    def _deliver(self, consumer: str, count: int) -> list[Job]:
        taken, self._undelivered = self._undelivered[:count], self._undelivered[count:]
        now = self._clock()
        jobs = []
        for entry_id in taken:
            if entry_id in self._entries:
                self._held[entry_id] = _Held(consumer, now, 1)
                jobs.append(job_from_fields(entry_id, self._entries[entry_id]))
        return jobs

    async def claim_stale_jobs(self, consumer: str, min_idle_ms: int, count: int) -> list[Job]:
        """Jobs held by any consumer for longer than ``min_idle_ms``, now held by ``consumer``."""
        now = self._clock()
        self._consumers[consumer] = now
        jobs: list[Job] = []
        for entry_id, held in list(self._held.items()):
            if len(jobs) >= count:
                break
            if (now - held.delivered_at) * 1000 < min_idle_ms:
                continue
            if entry_id not in self._entries:  # trimmed away: nothing to run
                del self._held[entry_id]
                continue
            held.consumer, held.delivered_at, held.deliveries = consumer, now, held.deliveries + 1
            jobs.append(job_from_fields(entry_id, self._entries[entry_id], held.deliveries))
        return jobs

    async def keep_jobs(self, consumer: str, entry_ids: list[str]) -> dict[str, HoldStatus]:
        """Renew this consumer's hold on each entry it still holds; say where each stands."""
        now = self._clock()
        self._consumers[consumer] = now
        statuses: dict[str, HoldStatus] = {}
        for entry_id in entry_ids:
            held = self._held.get(entry_id)
            if held is None:
                statuses[entry_id] = "gone"
            elif held.consumer != consumer:
                statuses[entry_id] = "taken"
            else:
                held.delivered_at = now
                statuses[entry_id] = "held"
        return statuses

    async def release_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Hand held jobs back at once: they look idle for a day to every stale claim."""
        for entry_id in entry_ids:
            held = self._held.get(entry_id)
            if held is not None and held.consumer == consumer:
                held.delivered_at = self._clock() - RELEASED_IDLE_SECONDS

    async def next_seq(self, order_key: str) -> int:
        """The ``seq`` allowed to run next for ``order_key``."""
        return int(self._get(self.keys.next(order_key)) or 0) + 1

    async def complete_job(self, job: Job) -> None:
        """Acknowledge the job, mark its inbound id done, advance the turnstile once."""
        self._set(self.keys.done(job.inbound_id), "1", DONE_TTL_SECONDS)
        if self._held.pop(job.entry_id, None) is None:
            return  # already acknowledged (by a worker that had claimed it): advance only once
        self._entries.pop(job.entry_id, None)
        seq_key, next_key = self.keys.seq(job.order_key), self.keys.next(job.order_key)
        completed = max(int(self._get(next_key) or 0), job.seq)
        if completed >= int(self._get(seq_key) or 0):
            # caught up: the chat thread's next job gets seq 1 ("nothing outstanding, run at once")
            self._values.pop(seq_key, None)
            self._values.pop(next_key, None)
        else:
            self._set(next_key, completed, ORDER_TTL_SECONDS)
            self._refresh(seq_key, ORDER_TTL_SECONDS)

    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""
        return self._get(self.keys.done(inbound_id)) is not None

    # --- delivery records -------------------------------------------------------------------------
    async def record_delivery(
        self, inbound_id: str, plan: str, ttl_seconds: int, cleanup: tuple[str, float] | None = None
    ) -> DeliveryRecord:
        """Record the plan unless one is recorded (and schedule ``cleanup``); the record in force."""
        if cleanup is not None:
            await self.schedule_thread_cleanup(*cleanup)
        key = self.keys.delivery(inbound_id)
        if self._get(key) is None:
            self._set(key, {"plan": plan}, ttl_seconds)
        record = await self.delivery_record(inbound_id)
        assert record is not None
        return record

    async def delivery_record(self, inbound_id: str) -> DeliveryRecord | None:
        """The recorded plan and outcomes, or None."""
        fields = self._get(self.keys.delivery(inbound_id))
        if fields is None:
            return None
        outcomes = {int(index): outcome for index, outcome in fields.items() if index != "plan"}
        return DeliveryRecord(fields["plan"], outcomes)

    async def mark_delivered(self, inbound_id: str, index: int, outcome: str) -> None:
        """Note item ``index``'s outcome (the record's expiry stays)."""
        fields = self._get(self.keys.delivery(inbound_id))
        if fields is not None:
            fields[str(index)] = outcome

    # --- upkeep -----------------------------------------------------------------------------------
    async def schedule_thread_cleanup(self, thread_id: str, due: float) -> None:
        """Schedule (or move) the deletion of ``thread_id``'s checkpoints."""
        self._cleanup[thread_id] = due

    async def threads_due_for_cleanup(self, now: float, count: int) -> list[tuple[str, float]]:
        """Agent threads whose cleanup is due, soonest first."""
        due = sorted((at, thread_id) for thread_id, at in self._cleanup.items() if at <= now)
        return [(thread_id, at) for at, thread_id in due[:count]]

    async def thread_cleaned(self, thread_id: str, due: float) -> None:
        """Unschedule ``thread_id`` while it is still due at ``due``."""
        if self._cleanup.get(thread_id, float("inf")) <= due:
            del self._cleanup[thread_id]

    async def trim_acknowledged(self) -> int:
        """Nothing to do: completing a job removes its entry, and nothing else is kept."""
        return 0

    async def remove_idle_consumers(self, idle_seconds: float, keep: str) -> list[str]:
        """Forget consumers without jobs that were silent for ``idle_seconds``."""
        holding = {held.consumer for held in self._held.values()}
        limit = self._clock() - idle_seconds
        gone = [
            name
            for name, seen in self._consumers.items()
            if name != keep and name not in holding and seen <= limit
        ]
        for name in gone:
            del self._consumers[name]
        return gone

    # --- adapter state --------------------------------------------------------------------------
    async def get_json(self, key: str) -> Any | None:
        """JSON value under ``{prefix}:state:{key}``."""
        raw = self._get(self.keys.state(key))
        return None if raw is None else json.loads(raw)

    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with a TTL."""
        self._set(self.keys.state(key), json.dumps(value), ttl_seconds)

    async def delete(self, key: str) -> None:
        """Remove a state key."""
        self._values.pop(self.keys.state(key), None)

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew a lease; False when another holder has it."""
        key = self.keys.lease(name)
        current = self._get(key)
        if current is not None and current != holder:
            return False
        self._set(key, holder, ttl_seconds)
        return True

    async def release_lease(self, name: str, holder: str) -> None:
        """Release a lease held by ``holder``."""
        key = self.keys.lease(name)
        if self._get(key) == holder:
            del self._values[key]

    # --- health ---------------------------------------------------------------------------------
    async def ping(self) -> bool:
        """Always True: memory answers."""
        return True

    async def close(self) -> None:
        """Nothing to release."""
