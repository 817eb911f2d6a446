"""The Redis store: plain Redis 7, shared by replicas, one round trip per state change.

Every step that must be atomic (accept, claim, complete, lease) is a Lua script
sent with ``EVALSHA``. ``round_trips`` counts each command, script or pipeline
sent, so the benchmark can report the cost per message.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ResponseError

from agent.protocol import HumanInputResponse
from gateway.messages import MessageRef, Sender

from . import scripts
from .base import ClaimResult, HoldStatus, Job, PendingRecord, Store
from .keys import (
    DONE_TTL_SECONDS,
    GROUP,
    ORDER_TTL_SECONDS,
    PENDING_FIELDS,
    RELEASED_IDLE_SECONDS,
    StoreKeys,
    answered_fields,
    compact_json,
    decode_record,
    encode_record,
    job_from_fields,
    new_thread_id,
    to_millis,
)


class RedisStore(Store):
    """All gateway state in Redis under ``prefix``; the constructor does not connect."""

    def __init__(self, url: str, prefix: str, *, stream_maxlen: int = 100_000) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0
        self._maxlen = stream_maxlen
        # a short retry: a Redis restart is ridden out, a Redis that is down is reported quickly
        self._redis: Redis = Redis.from_url(
            url,
            decode_responses=True,
            socket_connect_timeout=2,
            retry=Retry(ExponentialBackoff(cap=0.5, base=0.05), 3),
        )
        self._group_ready = False
        self._accept = self._redis.register_script(scripts.ACCEPT_JOB)
        self._claim = self._redis.register_script(scripts.CLAIM_ANSWER)
        self._complete = self._redis.register_script(scripts.COMPLETE_JOB)
        self._complete_read = self._redis.register_script(scripts.COMPLETE_AND_READ)
        self._thread = self._redis.register_script(scripts.THREAD_FOR_CHAT)
        self._thread_pending = self._redis.register_script(scripts.THREAD_WITH_PENDING)
        self._follow = self._redis.register_script(scripts.FOLLOW_POINTER)
        self._set_ref = self._redis.register_script(scripts.SET_MESSAGE_REF)
        self._autoclaim = self._redis.register_script(scripts.CLAIM_STALE)
        self._keep = self._redis.register_script(scripts.KEEP_JOBS)
        self._release = self._redis.register_script(scripts.RELEASE_JOBS)
        self._lease = self._redis.register_script(scripts.ACQUIRE_LEASE)
        self._unlease = self._redis.register_script(scripts.RELEASE_LEASE)

    async def _ensure_group(self) -> None:
        """Create the consumer group (and the stream) once; another replica may have made it."""
        if self._group_ready:
            return
        self.round_trips += 1
        try:
            await self._redis.xgroup_create(self.keys.jobs, GROUP, id="0", mkstream=True)
        except ResponseError as exc:
            if "BUSYGROUP" not in str(exc):
                raise
        self._group_ready = True

    # --- chat thread -> agent thread ---------------------------------------------------------
    async def thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """The agent thread for a chat thread, made atomically on first use; refreshes the TTL."""
        self.round_trips += 1
        return await self._thread([self.keys.thread(thread_key)], [new_thread_id(), to_millis(ttl_seconds)])

    async def thread_with_pending(
        self, thread_key: str, ttl_seconds: int
    ) -> tuple[str, PendingRecord | None]:
        """The agent thread (made on first use, TTL refreshed) and its open clarification: one script."""
        self.round_trips += 1
        args: list[str | int] = [new_thread_id(), to_millis(ttl_seconds), self.prefix]
        thread_id, *raw = await self._thread_pending([self.keys.thread(thread_key)], args)
        record = decode_record(raw[0]) if raw else None
        return thread_id, record if record is not None and record.status == "pending" else None

    async def new_thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """Start a fresh agent thread for this chat thread (``/new``)."""
        thread_id = new_thread_id()
        self.round_trips += 1
        await self._redis.set(self.keys.thread(thread_key), thread_id, px=to_millis(ttl_seconds))
        return thread_id

    async def has_thread(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread."""
        self.round_trips += 1
        return bool(await self._redis.exists(self.keys.thread(thread_key)))

    # --- accept --------------------------------------------------------------------------------
    async def accept_job(
        self,
        dedupe_key: str,
        kind: str,
        inbound_id: str,
        order_key: str,
        payload: dict[str, Any],
        seen_ttl: int,
    ) -> bool:
        """``SET NX`` the dedupe key, take the next ``seq``, append the job: one script."""
        keys = [
            self.keys.seen(dedupe_key),
            self.keys.seq(order_key),
            self.keys.next(order_key),
            self.keys.jobs,
        ]
        args: list[str | int] = [
            to_millis(seen_ttl),
            self._maxlen,
            kind,
            inbound_id,
            order_key,
            compact_json(payload),
            to_millis(ORDER_TTL_SECONDS),
            uuid.uuid4().hex,  # recognizes this call's own effect when a lost reply is retried
        ]
        self.round_trips += 1
        return bool(await self._accept(keys, args))

    async def forget(self, dedupe_key: str) -> None:
        """Release a dedupe key so a redelivery is processed again."""
        self.round_trips += 1
        await self._redis.delete(self.keys.seen(dedupe_key))

    async def first_time(self, key: str, ttl_seconds: int) -> bool:
        """True the first time ``key`` is set within its TTL (shares ``seen:`` with dedupe keys).

        The marker holds a value unique to this call and ``SET … NX GET`` returns what was there,
        so when the client re-sends the command after a lost reply, the retry that finds its own
        marker still counts as the first time (else a click would be dropped as its own duplicate).
        """
        mark = uuid.uuid4().hex
        self.round_trips += 1
        previous = await self._redis.set(
            self.keys.seen(key), mark, nx=True, px=to_millis(ttl_seconds), get=True
        )
        return previous is None or previous == mark

    # --- pending clarifications ---------------------------------------------------------------
    async def save_pending(self, record: PendingRecord) -> None:
        """Store the record, its token and the thread's pending pointer until ``expires_at``."""
        at = int(record.expires_at * 1000)
        async with self._redis.pipeline(transaction=True) as pipe:
            pipe.set(self.keys.ask(record.request_id), encode_record(record), pxat=at)
            pipe.set(self.keys.token(record.token), record.request_id, pxat=at)
            pipe.set(self.keys.pending(record.thread_id), record.request_id, pxat=at)
            self.round_trips += 1
            await pipe.execute()

    async def get_pending(self, request_id: str) -> PendingRecord | None:
        """The record (pending or answered), or None once expired."""
        self.round_trips += 1
        return decode_record(await self._redis.get(self.keys.ask(request_id)))

    async def pending_for_token(self, token: str) -> PendingRecord | None:
        """The record behind a button token (one script: token -> id -> record)."""
        self.round_trips += 1
        return decode_record(await self._follow([self.keys.token(token)], [f"{self.prefix}:ask:"]))

    async def pending_for_thread(self, thread_id: str) -> PendingRecord | None:
        """The open clarification of an agent thread, if any."""
        self.round_trips += 1
        record = decode_record(await self._follow([self.keys.pending(thread_id)], [f"{self.prefix}:ask:"]))
        return record if record is not None and record.status == "pending" else None

    async def set_message_ref(self, request_id: str, ref: MessageRef) -> None:
        """Remember the message that shows the request (one script; an answer in the record stays)."""
        self.round_trips += 1
        await self._set_ref([self.keys.ask(request_id)], [compact_json(ref.model_dump(mode="json"))])

    async def claim_answer(
        self,
        request_id: str,
        answered_by: Sender,
        response: HumanInputResponse,
        followup: tuple[str, str, dict[str, Any]] | None = None,
    ) -> ClaimResult:
        """Mark the request answered once and append its follow-up job: one script."""
        answered = answered_fields(answered_by.model_dump(mode="json"), response.model_dump(mode="json"))
        inbound_id, order_key, payload = followup or ("", "", {})
        args = [
            PENDING_FIELDS,
            answered,
            self.prefix,
            request_id,
            "1" if followup is not None else "0",
            inbound_id,
            order_key,
            compact_json(payload),
            self._maxlen,
            to_millis(ORDER_TTL_SECONDS),
        ]
        self.round_trips += 1
        status, *raw = await self._claim([self.keys.ask(request_id), self.keys.jobs], args)
        return ClaimResult(status=status, record=decode_record(raw[0]) if raw else None)

    # --- work queue ---------------------------------------------------------------------------
    async def _on_group(self, command: Callable[[], Awaitable[Any]]) -> Any:
        """Run a consumer-group command; remake the group once if Redis lost it (flush, restart)."""
        await self._ensure_group()
        self.round_trips += 1
        try:
            return await command()
        except ResponseError as exc:
            if "NOGROUP" not in str(exc):
                raise
        self._group_ready = False
        await self._ensure_group()
        self.round_trips += 1
        return await command()

    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for this consumer, waiting up to ``block_ms`` (0: do not wait)."""
        reply: Any = await self._on_group(
            lambda: self._redis.xreadgroup(
                GROUP, consumer, {self.keys.jobs: ">"}, count=count, block=block_ms if block_ms > 0 else None
            )
        )
        return [
            job_from_fields(entry_id, fields) for _, entries in reply or [] for entry_id, fields in entries
        ]

    async def claim_stale_jobs(self, consumer: str, min_idle_ms: int, count: int) -> list[Job]:
        """Jobs left by a dead consumer (``XAUTOCLAIM``) with their delivery counts: one script."""
        args: list[str | int] = [GROUP, consumer, min_idle_ms, count]
        rows: Any = await self._on_group(lambda: self._autoclaim([self.keys.jobs], args))
        return [
            job_from_fields(entry_id, dict(zip(flat[::2], flat[1::2], strict=True)), int(deliveries))
            for entry_id, flat, deliveries in rows
        ]

    async def touch_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Reset the idle time of the jobs this consumer still holds so no one claims them."""
        await self.keep_jobs(consumer, entry_ids)

    async def keep_jobs(self, consumer: str, entry_ids: list[str]) -> dict[str, HoldStatus]:
        """Renew this consumer's hold on each entry it still holds; say where each stands: one script."""
        if not entry_ids:
            return {}
        args: list[str] = [GROUP, consumer, *entry_ids]
        statuses: Any = await self._on_group(lambda: self._keep([self.keys.jobs], args))
        return dict(zip(entry_ids, statuses, strict=True))

    async def release_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Hand held jobs back at once: they look idle for a day to every stale claim. One script."""
        if not entry_ids:
            return
        args: list[str | int] = [GROUP, consumer, to_millis(RELEASED_IDLE_SECONDS), *entry_ids]
        await self._on_group(lambda: self._release([self.keys.jobs], args))

    async def next_seq(self, order_key: str) -> int:
        """The ``seq`` allowed to run next for ``order_key``."""
        self.round_trips += 1
        return int(await self._redis.get(self.keys.next(order_key)) or 0) + 1

    async def complete_job(self, job: Job) -> None:
        """``XACK`` + done marker + turnstile advance (once per entry): one script."""
        keys = [
            self.keys.jobs,
            self.keys.done(job.inbound_id),
            self.keys.seq(job.order_key),
            self.keys.next(job.order_key),
        ]
        self.round_trips += 1
        args: list[str | int] = [
            GROUP,
            job.entry_id,
            job.seq,
            to_millis(DONE_TTL_SECONDS),
            to_millis(ORDER_TTL_SECONDS),
        ]
        await self._complete(keys, args)

    async def complete_and_read(
        self, job: Job, consumer: str, count: int, thread_ttl_seconds: int
    ) -> list[Job]:
        """``complete_job`` and a non-blocking read with each ready job's thread lookups: one script."""
        if count <= 0:
            await self.complete_job(job)
            return []
        keys = [
            self.keys.jobs,
            self.keys.done(job.inbound_id),
            self.keys.seq(job.order_key),
            self.keys.next(job.order_key),
        ]
        args: list[str | int] = [
            GROUP,
            job.entry_id,
            job.seq,
            to_millis(DONE_TTL_SECONDS),
            to_millis(ORDER_TTL_SECONDS),
            consumer,
            count,
            to_millis(thread_ttl_seconds),
            self.prefix,
            *(new_thread_id() for _ in range(count)),
        ]
        self.round_trips += 1
        rows: Any = json.loads(await self._complete_read(keys, args))
        jobs = []
        for entry_id, fields, ready, thread_id, raw in rows:
            read = job_from_fields(entry_id, fields)
            read.turn_ready = bool(ready)
            if thread_id:
                record = decode_record(raw) if raw else None
                read.thread_lookup = (
                    thread_id,
                    record if record is not None and record.status == "pending" else None,
                )
            jobs.append(read)
        return jobs

    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""
        self.round_trips += 1
        return bool(await self._redis.exists(self.keys.done(inbound_id)))

    # --- adapter state --------------------------------------------------------------------------
    async def get_json(self, key: str) -> Any | None:
        """JSON value under ``{prefix}:state:{key}``."""
        self.round_trips += 1
        raw = await self._redis.get(self.keys.state(key))
        return None if raw is None else json.loads(raw)

    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with a TTL."""
        self.round_trips += 1
        await self._redis.set(self.keys.state(key), json.dumps(value), px=to_millis(ttl_seconds))

    async def delete(self, key: str) -> None:
        """Remove a state key."""
        self.round_trips += 1
        await self._redis.delete(self.keys.state(key))

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew (holder only) a lease; False when another holder has it."""
        self.round_trips += 1
        return bool(await self._lease([self.keys.lease(name)], [holder, to_millis(ttl_seconds)]))

    async def release_lease(self, name: str, holder: str) -> None:
        """Release a lease held by ``holder`` (compare-and-delete)."""
        self.round_trips += 1
        await self._unlease([self.keys.lease(name)], [holder])

    # --- health ---------------------------------------------------------------------------------
    async def ping(self) -> bool:
        """True when Redis answers within 3 s; never raises."""
        self.round_trips += 1
        try:
            return bool(await asyncio.wait_for(self._redis.ping(), timeout=3))
        except Exception:  # refused, timed out, auth failed: all mean "not ready"
            return False

    async def close(self) -> None:
        """Close the connection pool."""
        await self._redis.aclose()
