"""The Redis store's job stream: one consumer group, entries held, renewed, claimed and completed.

Reading new jobs (``XREADGROUP … >``) is not safe to re-send: a repeat would skip the entries
the lost reply carried. It goes over a client that never re-sends; after a failure the next read
first takes this consumer's delivered entries it has not handed out (``XREADGROUP … 0``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ResponseError

from . import decline_scripts, scripts
from .keys import (
    DONE_TTL_SECONDS,
    GROUP,
    ORDER_TTL_SECONDS,
    RELEASED_IDLE_SECONDS,
    job_from_fields,
    to_millis,
)
from .records import HoldStatus, Job, Skip
from .redis_commands import LOST, RedisCommands, Script, fields_of

#: How many ids a consumer may hold as handed out before they are checked against its pending list
#: (a worker process holds far fewer at once): a job handed back and then answered by another
#: process would otherwise stay among them for the process's life.
HANDED_CHECK_AT = 1000


class RedisJobStream(RedisCommands):
    """The work-queue half of ``RedisStore``: the jobs stream and what each consumer holds."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        # per consumer: entries handed to the caller and not yet completed or given back, and
        # whether a read failed after Redis may have delivered entries nobody has seen
        self._handed: dict[str, set[str]] = {}
        self._unseen: set[str] = set()
        self._group_ready = False
        self._complete = self._script(scripts.COMPLETE_JOB)
        self._requeue = self._script(scripts.REQUEUE_JOB)
        self._autoclaim = self._script(scripts.CLAIM_STALE)
        self._keep = self._script(scripts.KEEP_JOBS)
        self._release = self._script(scripts.RELEASE_JOBS)
        self._trim = self._script(scripts.TRIM_ACKNOWLEDGED)
        self._remove_idle = self._script(scripts.REMOVE_IDLE_CONSUMERS)
        self._own = self._script(scripts.OWN_ENTRIES)
        self._skipping = self._script(decline_scripts.CLAIM_STALE_SKIPPING)
        self._decline = self._script(decline_scripts.DECLINE_JOBS)

    async def _ensure_group(self) -> None:
        """Create the consumer group (and the stream) once; another replica may have made it."""
        if self._group_ready:
            return
        try:
            await self._command("XGROUP", "CREATE", self.keys.jobs, GROUP, "0", "MKSTREAM")
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    async def _on_group(self, command: Callable[[], Awaitable[Any]]) -> Any:
        """Run a consumer-group command; remake the group once if Redis lost it (flush, restart)."""
        await self._ensure_group()
        try:
            return await command()
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
        self._group_ready = False
        await self._ensure_group()
        return await command()

    async def _run_once(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a script that is never re-sent (it delivers entries): see ``_delivering``."""
        self.round_trips += 1
        return await script(keys, args, client=self._reads)

    async def _delivering(self, consumer: str, call: Callable[[], Awaitable[Any]]) -> tuple[bool, Any]:
        """``(True, reply)`` of a call that delivers entries to ``consumer``; ``(False, None)`` when
        its reply was lost (it may have run: the entries it delivered are then read back by
        ``_unseen_jobs``). Such a call is never re-sent: a repeat would deliver other entries and
        leave the first ones held by this consumer with nobody working on them.
        """
        try:
            return True, await self._on_group(call)
        except asyncio.CancelledError:
            self._unseen.add(consumer)  # Redis may have delivered what nobody now waits for
            raise
        except LOST:
            self._unseen.add(consumer)
            return False, None

    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for this consumer, waiting up to ``block_ms`` (0: do not wait).

        After a lost reply (this call's or an earlier one's), the entries Redis delivered to this
        consumer that it never received come first.
        """
        if consumer in self._unseen:
            recovered = await self._unseen_jobs(consumer)
            if recovered:
                return recovered
        read: list[str | int] = ["XREADGROUP", "GROUP", GROUP, consumer, "COUNT", count]
        if block_ms > 0:
            read += ["BLOCK", block_ms]  # the read holds its connection meanwhile; others take another

        async def command() -> Any:
            self.round_trips += 1
            return await self._reads.execute_command(*read, "STREAMS", self.keys.jobs, ">")

        answered, reply = await self._delivering(consumer, command)
        if not answered:
            return await self._unseen_jobs(consumer)
        entries = [(entry_id, flat, 1) for _, stream in reply or [] for entry_id, flat in stream]
        return self._hand_out(consumer, entries)

    async def _unseen_jobs(self, consumer: str) -> list[Job]:
        """Entries delivered to ``consumer`` that were never handed out (their reply was lost).

        Read from the consumer's own pending list (read-only, so safe to re-send), minus the entries
        handed out and not yet completed; that list also bounds what this store remembers.
        """
        handed = self._handed.setdefault(consumer, set())
        args: list[Any] = [GROUP, consumer, len(handed) + 1000]
        rows: Any = await self._on_group(lambda: self._run(self._own, [self.keys.jobs], args))
        self._unseen.discard(consumer)
        handed &= {entry_id for entry_id, _, _ in rows}  # acknowledged or taken: no longer ours
        return self._hand_out(consumer, [row for row in rows if row[0] not in handed])

    def _hand_out(self, consumer: str, rows: list[Any]) -> list[Job]:
        """Jobs from ``(entry id, flat fields, deliveries)`` rows, remembered as handed out."""
        handed = self._handed.setdefault(consumer, set())
        jobs = []
        for entry_id, flat, deliveries in rows:
            if not flat:
                continue  # deleted from the stream: nothing to run
            handed.add(entry_id)
            jobs.append(job_from_fields(entry_id, fields_of(flat), int(deliveries)))
        return jobs

    def _handed_back(self, consumer: str, entry_ids: list[str]) -> None:
        handed = self._handed.get(consumer)
        if handed is not None:
            handed.difference_update(entry_ids)

    async def claim_stale_jobs(
        self, consumer: str, min_idle_ms: int, count: int, skip: Skip = None
    ) -> list[Job]:
        """Jobs left by a dead consumer (``XAUTOCLAIM``) with their delivery counts: one script.

        ``skip``: (platforms, cutoff unix time): their jobs accepted since the cutoff stay."""
        args: list[Any] = [GROUP, consumer, min_idle_ms, count]
        script = self._autoclaim
        if skip is not None and skip[0]:
            script = self._skipping
            args += [to_millis(skip[1]), *sorted(skip[0])]
        answered, rows = await self._delivering(
            consumer, lambda: self._run_once(script, [self.keys.jobs], args)
        )
        if not answered:
            return await self._unseen_jobs(consumer)
        await self._forget_taken(consumer)
        return self._hand_out(consumer, rows)

    async def _forget_taken(self, consumer: str) -> None:
        """Past ``HANDED_CHECK_AT``, keep as handed out only what ``consumer`` still holds: jobs it
        handed back (left for the stale claim) that another consumer took are no longer its own."""
        handed = self._handed.get(consumer)
        if handed is None or len(handed) < HANDED_CHECK_AT:
            return
        count = len(handed) + 1000
        rows = await self._on_group(
            lambda: self._send(lambda c: c.xpending_range(self.keys.jobs, GROUP, "-", "+", count, consumer))
        )
        handed &= {row["message_id"] for row in rows}

    async def keep_jobs(self, consumer: str, entry_ids: list[str]) -> dict[str, HoldStatus]:
        """Renew this consumer's hold on each entry it still holds; say where each stands: one script."""
        if not entry_ids:
            return {}
        args: list[Any] = [GROUP, consumer, *entry_ids]
        statuses: Any = await self._on_group(lambda: self._run(self._keep, [self.keys.jobs], args))
        held = dict(zip(entry_ids, statuses, strict=True))
        self._handed_back(consumer, [entry_id for entry_id, status in held.items() if status != "held"])
        return held

    async def release_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Hand held jobs back at once: they look idle for a day to every stale claim. One script."""
        if not entry_ids:
            return
        args: list[Any] = [GROUP, consumer, to_millis(RELEASED_IDLE_SECONDS), *entry_ids]
        await self._on_group(lambda: self._run(self._release, [self.keys.jobs], args))
        self._handed_back(consumer, entry_ids)

    async def decline_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """``release_jobs`` taking back the delivery that handed them here (not run): one script."""
        if not entry_ids:
            return
        args: list[Any] = [GROUP, consumer, to_millis(RELEASED_IDLE_SECONDS), *entry_ids]
        await self._on_group(lambda: self._run(self._decline, [self.keys.jobs], args))
        self._handed_back(consumer, entry_ids)

    async def next_seq(self, order_key: str) -> int:
        """The ``seq`` allowed to run next for ``order_key``."""
        return int(await self._command("GET", self.keys.next(order_key)) or 0) + 1

    async def complete_job(self, job: Job) -> None:
        """``XACK`` + done marker + turnstile advance (once per entry): one script."""
        keys = [
            self.keys.jobs,
            self.keys.done(job.inbound_id),
            self.keys.seq(job.order_key),
            self.keys.next(job.order_key),
        ]
        args: list[Any] = [
            GROUP,
            job.entry_id,
            job.seq,
            to_millis(DONE_TTL_SECONDS),
            to_millis(ORDER_TTL_SECONDS),
        ]
        await self._run(self._complete, keys, args)
        for handed in self._handed.values():
            handed.discard(job.entry_id)

    async def requeue_job(self, job: Job) -> bool:
        """``XACK`` + turnstile advance + ``XADD`` of the same job with the next seq: one script."""
        keys = [self.keys.jobs, self.keys.seq(job.order_key), self.keys.next(job.order_key)]
        args: list[Any] = [
            GROUP,
            job.entry_id,
            job.seq,
            to_millis(ORDER_TTL_SECONDS),
            job.kind,
            job.inbound_id,
            job.order_key,
            job.payload_json,
        ]
        moved = bool(await self._run(self._requeue, keys, args))
        for handed in self._handed.values():
            handed.discard(job.entry_id)
        return moved

    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""
        return bool(await self._command("EXISTS", self.keys.done(inbound_id)))

    async def waiting_jobs(self, order_key: str, limit: int) -> list[Job]:
        """``order_key``'s jobs not completed (held, or after the group's last delivered entry),
        oldest first: read from the oldest held entry on, at most ``limit`` entries. Three read-only
        commands (``XINFO GROUPS``, ``XPENDING``, ``XRANGE``), for ``/cancel``: none per message."""
        key = self.keys.jobs
        groups = await self._on_group(lambda: self._command("XINFO", "GROUPS", key))
        groups = [group if isinstance(group, dict) else fields_of(group) for group in groups]
        last = next((str(g["last-delivered-id"]) for g in groups if str(g["name"]) == GROUP), "0-0")
        held = await self._command("XPENDING", key, GROUP, "-", "+", limit)  # [id, consumer, idle, n]
        deliveries = {str(row[0]): int(row[3]) for row in held or []}
        start = str(held[0][0]) if held else f"({last}"
        rows = await self._command("XRANGE", key, start, "+", "COUNT", limit)
        jobs = []
        for entry_id, flat in rows or []:
            fields = fields_of(flat) if flat else {}
            waiting = entry_id in deliveries or _after(entry_id, last)
            if waiting and fields.get("order_key") == order_key:
                jobs.append(job_from_fields(entry_id, fields, deliveries.get(entry_id, 1)))
        return jobs

    async def trim_acknowledged(self) -> int:
        """Delete the stream entries the group is done with (``XTRIM MINID``): one script."""
        return int(await self._run(self._trim, [self.keys.jobs], [GROUP]))

    async def remove_idle_consumers(self, idle_seconds: float, keep: str) -> list[str]:
        """Delete consumers without jobs that were silent for ``idle_seconds``: one script."""
        args: list[Any] = [GROUP, to_millis(idle_seconds), keep]
        return [str(name) for name in await self._run(self._remove_idle, [self.keys.jobs], args)]


def _after(entry_id: str, last: str) -> bool:
    """True when stream entry ``entry_id`` comes after ``last`` (``ms-n`` ids, compared as numbers)."""
    ms, _, n = entry_id.partition("-")
    last_ms, _, last_n = last.partition("-")
    return (int(ms), int(n or 0)) > (int(last_ms), int(last_n or 0))
