"""The embedded store's job stream: entries in append order, held by consumers until completed.

Like every method of ``MemoryStore``, each here runs without awaiting between its reads and
writes, so it is atomic on the event loop as the Redis store's scripts are in Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass

from .keys import DONE_TTL_SECONDS, ORDER_TTL_SECONDS, RELEASED_IDLE_SECONDS, job_fields, job_from_fields
from .memory_values import MemoryValues
from .records import HoldStatus, Job, Payload, Skip


@dataclass
class _Held:
    """A delivered, not yet acknowledged entry (a row of the pending-entries list)."""

    consumer: str
    delivered_at: float
    deliveries: int


class MemoryJobStream(MemoryValues):
    """The work-queue half of ``MemoryStore``: the jobs stream and what each consumer holds."""

    def __init__(self, prefix: str, *, clock: Callable[[], float]) -> None:
        super().__init__(prefix, clock=clock)
        self._entries: dict[str, dict[str, str]] = {}  # the stream, in append order
        self._undelivered: list[str] = []  # entry ids not yet read by the group
        self._held: dict[str, _Held] = {}  # entry id -> who holds it
        self._entry_counter = 0
        self._appended = asyncio.Event()
        self._consumers: dict[str, float] = {}  # consumer -> when it was last heard from

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

    async def claim_stale_jobs(
        self, consumer: str, min_idle_ms: int, count: int, skip: Skip = None
    ) -> list[Job]:
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
            if skip is not None and _skipped(entry_id, self._entries[entry_id], skip):
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

    async def decline_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """``release_jobs``, the delivery that handed them here not counted."""
        for entry_id in entry_ids:
            held = self._held.get(entry_id)
            if held is not None and held.consumer == consumer:
                held.delivered_at = self._clock() - RELEASED_IDLE_SECONDS
                held.deliveries = max(held.deliveries - 1, 0)

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

    async def requeue_job(self, job: Job) -> bool:
        """Acknowledge the job, advance the turnstile past it, append it again (a later seq)."""
        if self._held.pop(job.entry_id, None) is None:
            return False
        self._entries.pop(job.entry_id, None)
        next_key = self.keys.next(job.order_key)
        self._set(next_key, max(int(self._get(next_key) or 0), job.seq), ORDER_TTL_SECONDS)
        self._append(job.kind, job.inbound_id, job.order_key, job.payload_json)
        return True

    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""
        return self._get(self.keys.done(inbound_id)) is not None

    async def waiting_jobs(self, order_key: str, limit: int) -> list[Job]:
        """``order_key``'s jobs not completed (held or not yet delivered), oldest first."""
        jobs = []
        for entry_id, fields in list(self._entries.items())[:limit]:
            if fields["order_key"] == order_key:
                held = self._held.get(entry_id)
                jobs.append(job_from_fields(entry_id, fields, held.deliveries if held else 1))
        return jobs

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


def _skipped(entry_id: str, fields: dict[str, str], skip: Skip) -> bool:
    """True when the entry's platform is skipped and it was accepted at or after the cutoff."""
    if skip is None:
        return False
    platforms, cutoff = skip
    platform = fields["order_key"].split(":", 1)[0]
    return platform in platforms and int(entry_id.split("-")[0]) >= int(cutoff * 1000)
