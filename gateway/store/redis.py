"""The Redis store: plain Redis 7, shared by replicas, one round trip per state change.

Every step that must be atomic (accept, claim, complete, lease) is a Lua script
sent with ``EVALSHA``. Commands go over one multiplexed link (``link.RedisLink``);
the blocking read of new jobs has a link of its own. ``round_trips`` counts each
command or script sent, so the benchmark can report the cost per message.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import ResponseError

from agent.protocol import HumanInputResponse
from gateway.messages import MessageRef, Sender

from . import scripts
from .base import ChatStatus, ClaimResult, DeliveryRecord, HoldStatus, Job, Payload, PendingRecord, Store
from .keys import (
    DONE_TTL_SECONDS,
    GROUP,
    ORDER_TTL_SECONDS,
    PENDING_FIELDS,
    RELEASED_IDLE_SECONDS,
    StoreKeys,
    answered_fields,
    call_mark,
    compact_json,
    decode_record,
    encode_record,
    job_from_fields,
    new_thread_id,
    payload_text,
    still_open,
    to_millis,
)
from .link import RedisLink, Script


class RedisStore(Store):
    """All gateway state in Redis under ``prefix``; the constructor does not connect."""

    def __init__(self, url: str, prefix: str) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0
        # retries ride out a Redis restart; a Redis that is down is reported within seconds
        self._link = RedisLink(url, client_name=f"clarigate:{prefix}")
        # XREADGROUP … BLOCK holds every reply behind it: the waiting read gets its own connection
        self._reads = RedisLink(url, client_name=f"clarigate:{prefix}:reads", close_on_cancel=True)
        self._group_ready = False
        self._accept = Script(scripts.ACCEPT_JOB)
        self._claim = Script(scripts.CLAIM_ANSWER)
        self._complete = Script(scripts.COMPLETE_JOB)
        self._complete_read = Script(scripts.COMPLETE_AND_READ)
        self._thread = Script(scripts.THREAD_FOR_CHAT)
        self._thread_pending = Script(scripts.THREAD_WITH_PENDING)
        self._follow = Script(scripts.FOLLOW_POINTER)
        self._save = Script(scripts.SAVE_PENDING)
        self._set_ref = Script(scripts.SET_MESSAGE_REF)
        self._autoclaim = Script(scripts.CLAIM_STALE)
        self._keep = Script(scripts.KEEP_JOBS)
        self._release = Script(scripts.RELEASE_JOBS)
        self._record = Script(scripts.RECORD_DELIVERY)
        self._due_threads = Script(scripts.DUE_THREADS)
        self._thread_cleaned = Script(scripts.THREAD_CLEANED)
        self._trim = Script(scripts.TRIM_ACKNOWLEDGED)
        self._remove_idle = Script(scripts.REMOVE_IDLE_CONSUMERS)
        self._lease = Script(scripts.ACQUIRE_LEASE)
        self._unlease = Script(scripts.RELEASE_LEASE)

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        self.round_trips += 1
        return await self._link.evalsha(script, keys, args)

    async def _command(self, *args: str | int) -> Any:
        self.round_trips += 1
        return await self._link.execute(*args)

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

    # --- chat thread -> agent thread ---------------------------------------------------------
    async def thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """The agent thread for a chat thread, made atomically on first use; refreshes the TTL."""
        args = [new_thread_id(), to_millis(ttl_seconds)]
        return str(await self._run(self._thread, [self.keys.thread(thread_key)], args))

    async def thread_with_pending(
        self, thread_key: str, ttl_seconds: int
    ) -> tuple[str, PendingRecord | None]:
        """The agent thread (made on first use, TTL refreshed) and its open clarification: one script."""
        args: list[Any] = [new_thread_id(), to_millis(ttl_seconds), self.prefix]
        thread_id, *raw = await self._run(self._thread_pending, [self.keys.thread(thread_key)], args)
        return thread_id, still_open(decode_record(raw[0]) if raw else None)

    async def new_thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """Start a fresh agent thread for this chat thread (``/new``)."""
        thread_id = new_thread_id()
        await self._command("SET", self.keys.thread(thread_key), thread_id, "PX", to_millis(ttl_seconds))
        return thread_id

    async def has_thread(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread."""
        return bool(await self._command("EXISTS", self.keys.thread(thread_key)))

    async def thread_of_chat(self, thread_key: str) -> str | None:
        """The agent thread of a chat thread, or None; makes none and leaves the TTL alone."""
        thread_id = await self._command("GET", self.keys.thread(thread_key))
        return str(thread_id) if thread_id is not None else None

    async def chat_status(self, thread_key: str) -> ChatStatus:
        """The agent thread, its open clarification and the outstanding jobs: two round trips."""
        keys = [self.keys.thread(thread_key), self.keys.seq(thread_key), self.keys.next(thread_key)]
        thread_id, handed_out, completed = await self._command("MGET", *keys)
        pending = await self.pending_for_thread(thread_id) if thread_id else None
        outstanding = max(int(handed_out or 0) - int(completed or 0), 0)
        return ChatStatus(str(thread_id) if thread_id else None, pending, outstanding)

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
        """``SET NX`` the dedupe key, take the next ``seq``, append the job: one script."""
        keys = [
            self.keys.seen(dedupe_key),
            self.keys.seq(order_key),
            self.keys.next(order_key),
            self.keys.jobs,
        ]
        args: list[Any] = [
            to_millis(seen_ttl),
            kind,
            inbound_id,
            order_key,
            payload_text(payload),
            to_millis(ORDER_TTL_SECONDS),
            call_mark(),  # recognizes this call's own effect when a lost reply is retried
        ]
        return bool(await self._run(self._accept, keys, args))

    async def forget(self, dedupe_key: str) -> None:
        """Release a dedupe key so a redelivery is processed again."""
        await self._command("DEL", self.keys.seen(dedupe_key))

    async def first_time(self, key: str, ttl_seconds: int) -> bool:
        """True the first time ``key`` is set within its TTL (shares ``seen:`` with dedupe keys).

        The marker holds a value unique to this call and ``SET … NX GET`` returns what was there,
        so when the link re-sends the command after a lost reply, the retry that finds its own
        marker still counts as the first time (else a click would be dropped as its own duplicate).
        """
        mark = call_mark()
        previous = await self._command(
            "SET", self.keys.seen(key), mark, "NX", "GET", "PX", to_millis(ttl_seconds)
        )
        return previous is None or previous == mark

    # --- pending clarifications ---------------------------------------------------------------
    async def save_pending(self, record: PendingRecord) -> None:
        """Store the record, its token and the thread's pending pointer until ``expires_at``: one script."""
        keys = [
            self.keys.ask(record.request_id),
            self.keys.token(record.token),
            self.keys.pending(record.thread_id),
        ]
        args: list[Any] = [encode_record(record), record.request_id, int(record.expires_at * 1000)]
        await self._run(self._save, keys, args)

    async def get_pending(self, request_id: str) -> PendingRecord | None:
        """The record (pending or answered), or None once expired."""
        return decode_record(await self._command("GET", self.keys.ask(request_id)))

    async def pending_for_token(self, token: str) -> PendingRecord | None:
        """The record behind a button token (one script: token -> id -> record)."""
        return decode_record(await self._run(self._follow, [self.keys.token(token)], [f"{self.prefix}:ask:"]))

    async def pending_for_thread(self, thread_id: str) -> PendingRecord | None:
        """The open clarification of an agent thread, if any."""
        keys, args = [self.keys.pending(thread_id)], [f"{self.prefix}:ask:"]
        return still_open(decode_record(await self._run(self._follow, keys, args)))

    async def set_message_ref(self, request_id: str, ref: MessageRef) -> None:
        """Remember the message that shows the request (one script; an answer in the record stays)."""
        args = [compact_json(ref.model_dump(mode="json"))]
        await self._run(self._set_ref, [self.keys.ask(request_id)], args)

    async def claim_answer(
        self,
        request_id: str,
        answered_by: Sender,
        response: HumanInputResponse,
        followup: tuple[str, str, Payload] | None = None,
    ) -> ClaimResult:
        """Mark the request answered once and append its follow-up job: one script."""
        answered = answered_fields(answered_by, response)
        inbound_id, order_key, payload = followup or ("", "", {})
        args: list[Any] = [
            PENDING_FIELDS,
            answered,
            self.prefix,
            request_id,
            "1" if followup is not None else "0",
            inbound_id,
            order_key,
            payload_text(payload),
            to_millis(ORDER_TTL_SECONDS),
        ]
        status, *raw = await self._run(self._claim, [self.keys.ask(request_id), self.keys.jobs], args)
        return ClaimResult(status=status, record=decode_record(raw[0]) if raw else None)

    # --- work queue ---------------------------------------------------------------------------
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

    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for this consumer, waiting up to ``block_ms`` (0: do not wait)."""
        read: list[str | int] = ["XREADGROUP", "GROUP", GROUP, consumer, "COUNT", count]
        streams = ["STREAMS", self.keys.jobs, ">"]

        async def command() -> Any:
            self.round_trips += 1
            if block_ms <= 0:
                return await self._link.execute(*read, *streams)
            # the reply may take block_ms: the link's reply timeout counts from then
            within = block_ms / 1000 + self._reads.options.reply_timeout
            return await self._reads.execute(*read, "BLOCK", block_ms, *streams, reply_within=within)

        reply: Any = await self._on_group(command)
        entries = [entry for _, stream_entries in reply or [] for entry in stream_entries]
        return [job_from_fields(entry_id, _fields(flat)) for entry_id, flat in entries]

    async def claim_stale_jobs(self, consumer: str, min_idle_ms: int, count: int) -> list[Job]:
        """Jobs left by a dead consumer (``XAUTOCLAIM``) with their delivery counts: one script."""
        args: list[Any] = [GROUP, consumer, min_idle_ms, count]
        rows: Any = await self._on_group(lambda: self._run(self._autoclaim, [self.keys.jobs], args))
        return [job_from_fields(entry_id, _fields(flat), int(n)) for entry_id, flat, n in rows]

    async def touch_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Reset the idle time of the jobs this consumer still holds so no one claims them."""
        await self.keep_jobs(consumer, entry_ids)

    async def keep_jobs(self, consumer: str, entry_ids: list[str]) -> dict[str, HoldStatus]:
        """Renew this consumer's hold on each entry it still holds; say where each stands: one script."""
        if not entry_ids:
            return {}
        args: list[Any] = [GROUP, consumer, *entry_ids]
        statuses: Any = await self._on_group(lambda: self._run(self._keep, [self.keys.jobs], args))
        return dict(zip(entry_ids, statuses, strict=True))

    async def release_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Hand held jobs back at once: they look idle for a day to every stale claim. One script."""
        if not entry_ids:
            return
        args: list[Any] = [GROUP, consumer, to_millis(RELEASED_IDLE_SECONDS), *entry_ids]
        await self._on_group(lambda: self._run(self._release, [self.keys.jobs], args))

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
        args: list[Any] = [
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
        flat: list[Any] = await self._run(self._complete_read, keys, args)
        jobs = []
        for i in range(0, len(flat), 9):
            entry_id, kind, inbound_id, order_key, seq, payload, ready, thread_id, raw = flat[i : i + 9]
            job = Job(entry_id, kind, inbound_id, order_key, int(seq), payload or "{}")
            job.turn_ready = bool(ready)
            if thread_id:
                job.thread_lookup = (thread_id, still_open(decode_record(raw) if raw else None))
            jobs.append(job)
        return jobs

    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""
        return bool(await self._command("EXISTS", self.keys.done(inbound_id)))

    # --- delivery records -------------------------------------------------------------------------
    async def record_delivery(
        self, inbound_id: str, plan: str, ttl_seconds: int, cleanup: tuple[str, float] | None = None
    ) -> DeliveryRecord:
        """Record the plan unless one is recorded (``HSETNX``), schedule ``cleanup``: one script."""
        keys = [self.keys.delivery(inbound_id), self.keys.cleanup]
        thread_id, due = cleanup or ("", 0.0)
        flat = await self._run(self._record, keys, [plan, to_millis(ttl_seconds), thread_id, repr(due)])
        record = _delivery_record(flat)
        assert record is not None  # just written, or written before
        return record

    async def delivery_record(self, inbound_id: str) -> DeliveryRecord | None:
        """The recorded plan and outcomes, or None: one script."""
        keys = [self.keys.delivery(inbound_id), self.keys.cleanup]
        return _delivery_record(await self._run(self._record, keys, ["", 1, "", 0]))

    async def mark_delivered(self, inbound_id: str, index: int, outcome: str) -> None:
        """Note item ``index``'s outcome in the record (``HSET`` keeps the key's TTL)."""
        await self._command("HSET", self.keys.delivery(inbound_id), str(index), outcome)

    # --- upkeep -----------------------------------------------------------------------------------
    async def schedule_thread_cleanup(self, thread_id: str, due: float) -> None:
        """Schedule (or move) the deletion of ``thread_id``'s checkpoints."""
        await self._command("ZADD", self.keys.cleanup, repr(due), thread_id)

    async def threads_due_for_cleanup(self, now: float, count: int) -> list[tuple[str, float]]:
        """Agent threads whose cleanup is due: one script."""
        flat = await self._run(self._due_threads, [self.keys.cleanup], [repr(now), count])
        return [(str(flat[i]), float(flat[i + 1])) for i in range(0, len(flat), 2)]

    async def thread_cleaned(self, thread_id: str, due: float) -> None:
        """Unschedule ``thread_id`` while it is still due at ``due``: one script."""
        await self._run(self._thread_cleaned, [self.keys.cleanup], [thread_id, repr(due)])

    async def trim_acknowledged(self) -> int:
        """Delete the stream entries the group is done with (``XTRIM MINID``): one script."""
        return int(await self._run(self._trim, [self.keys.jobs], [GROUP]))

    async def remove_idle_consumers(self, idle_seconds: float, keep: str) -> list[str]:
        """Delete consumers without jobs that were silent for ``idle_seconds``: one script."""
        args: list[Any] = [GROUP, to_millis(idle_seconds), keep]
        return [str(name) for name in await self._run(self._remove_idle, [self.keys.jobs], args)]

    # --- adapter state --------------------------------------------------------------------------
    async def get_json(self, key: str) -> Any | None:
        """JSON value under ``{prefix}:state:{key}``."""
        raw = await self._command("GET", self.keys.state(key))
        return None if raw is None else json.loads(raw)

    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with a TTL."""
        await self._command("SET", self.keys.state(key), json.dumps(value), "PX", to_millis(ttl_seconds))

    async def delete(self, key: str) -> None:
        """Remove a state key."""
        await self._command("DEL", self.keys.state(key))

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew (holder only) a lease; False when another holder has it."""
        return bool(await self._run(self._lease, [self.keys.lease(name)], [holder, to_millis(ttl_seconds)]))

    async def release_lease(self, name: str, holder: str) -> None:
        """Release a lease held by ``holder`` (compare-and-delete)."""
        await self._run(self._unlease, [self.keys.lease(name)], [holder])

    # --- health ---------------------------------------------------------------------------------
    async def ping(self) -> bool:
        """True when Redis answers within 3 s; never raises."""
        try:
            async with asyncio.timeout(3):
                return bool(await self._command("PING"))
        except Exception:  # refused, timed out, auth failed: all mean "not ready"
            return False

    async def close(self) -> None:
        """Close both connections."""
        await self._link.close()
        await self._reads.close()


def _delivery_record(flat: list[str]) -> DeliveryRecord | None:
    """A delivery record from its hash as a flat ``[field, value, …]`` list (None when empty)."""
    fields = _fields(flat or [])
    plan = fields.pop("plan", None)
    if plan is None:
        return None
    return DeliveryRecord(plan, {int(index): outcome for index, outcome in fields.items()})


def _fields(flat: list[str]) -> dict[str, str]:
    """A stream entry's fields from Redis' flat ``[name, value, …]`` list."""
    return dict(zip(flat[::2], flat[1::2], strict=True))
