"""The Redis store: plain Redis 7, shared by replicas, one round trip per state change.

Every step that must be atomic (accept, claim, complete, lease) is a Lua script sent with
``EVALSHA``, over redis-py's asyncio client (``connection.open_redis``: hiredis parser, TCP
keepalive, health checks, TLS, Sentinel). ``round_trips`` counts each command or script sent,
so the benchmark can report the cost per message.

Lost replies: the client re-sends a command whose connection failed, so every script the store
runs through ``_run`` / ``_command`` must be safe to run twice (see ``Store``). Reading new jobs
(``XREADGROUP … >``) is not: a repeat would skip the entries the lost reply carried. It goes
over a client that never re-sends; after a failure the next read first takes this consumer's
delivered entries it has not handed out (``XREADGROUP … 0``).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

from redis.commands.core import AsyncScript
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import MessageRef, Sender

from . import scripts
from .base import ChatStatus, ClaimResult, DeliveryRecord, HoldStatus, Job, Payload, PendingRecord, Store
from .connection import open_redis
from .keys import (
    DONE_TTL_SECONDS,
    GROUP,
    ORDER_TTL_SECONDS,
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

#: Errors after which a command may or may not have run.
LOST = (RedisConnectionError, RedisTimeoutError)

#: A Lua script of the store, run by its SHA1 (loaded on the first ``NOSCRIPT``).
Script = AsyncScript


class RedisStore(Store):
    """All gateway state in Redis under ``prefix``; the constructor does not connect."""

    def __init__(self, url: str, prefix: str) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0
        # retries ride out a Redis restart or failover; a Redis that is down is reported within seconds
        self._redis = open_redis(url)
        # reads of new jobs are never re-sent (module docstring)
        self._reads = open_redis(url, retries=0)
        # per consumer: entries handed to the caller and not yet completed or given back, and
        # whether a read failed after Redis may have delivered entries nobody has seen
        self._handed: dict[str, set[str]] = {}
        self._unseen: set[str] = set()
        self._group_ready = False
        self._accept = self._redis.register_script(scripts.ACCEPT_JOB)
        self._claim = self._redis.register_script(scripts.CLAIM_ANSWER)
        self._complete = self._redis.register_script(scripts.COMPLETE_JOB)
        self._thread = self._redis.register_script(scripts.THREAD_FOR_CHAT)
        self._thread_pending = self._redis.register_script(scripts.THREAD_WITH_PENDING)
        self._follow = self._redis.register_script(scripts.FOLLOW_POINTER)
        self._save = self._redis.register_script(scripts.SAVE_PENDING)
        self._set_ref = self._redis.register_script(scripts.SET_MESSAGE_REF)
        self._autoclaim = self._redis.register_script(scripts.CLAIM_STALE)
        self._keep = self._redis.register_script(scripts.KEEP_JOBS)
        self._release = self._redis.register_script(scripts.RELEASE_JOBS)
        self._record = self._redis.register_script(scripts.RECORD_DELIVERY)
        self._due_threads = self._redis.register_script(scripts.DUE_THREADS)
        self._thread_cleaned = self._redis.register_script(scripts.THREAD_CLEANED)
        self._trim = self._redis.register_script(scripts.TRIM_ACKNOWLEDGED)
        self._remove_idle = self._redis.register_script(scripts.REMOVE_IDLE_CONSUMERS)
        self._lease = self._redis.register_script(scripts.ACQUIRE_LEASE)
        self._unlease = self._redis.register_script(scripts.RELEASE_LEASE)
        self._own = self._redis.register_script(scripts.OWN_ENTRIES)

    async def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run a script; it is re-sent after a lost reply, so it must recognize its own earlier effect."""
        self.round_trips += 1
        return await script(keys, args, client=self._redis)

    async def _command(self, *args: str | int) -> Any:
        """Send one command (re-sent after a lost reply, so only commands safe to repeat)."""
        self.round_trips += 1
        return await self._redis.execute_command(*args)

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
        so when the client re-sends the command after a lost reply, the retry that finds its own
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
        args: list[Any] = [record.request_id, int(record.expires_at * 1000), *encode_record(record)]
        await self._run(self._save, keys, args)

    async def get_pending(self, request_id: str) -> PendingRecord | None:
        """The record (pending or answered), or None once expired."""
        return decode_record(await self._command("HGETALL", self.keys.ask(request_id)))

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
        *,
        seen: tuple[str, int] | None = None,
        current_in: str | None = None,
    ) -> ClaimResult:
        """Set the dedupe marker, mark the request answered once, append its follow-up job: one script."""
        inbound_id, order_key, payload = followup or ("", "", {})
        keys = [self.keys.ask(request_id), self.keys.jobs]
        if seen is not None:
            keys.append(self.keys.seen(seen[0]))
        args: list[Any] = [
            self.prefix,
            request_id,
            call_mark(),  # a re-sent claim recognizes its own earlier one: "claimed", not "already"
            *answered_fields(answered_by, response),
            "1" if followup is not None else "0",
            inbound_id,
            order_key,
            payload_text(payload),
            to_millis(ORDER_TTL_SECONDS),
            to_millis(seen[1]) if seen is not None else "",
            current_in if current_in is not None else "",
        ]
        status, *raw = await self._run(self._claim, keys, args)
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
            jobs.append(job_from_fields(entry_id, _fields(flat), int(deliveries)))
        return jobs

    def _handed_back(self, consumer: str, entry_ids: list[str]) -> None:
        handed = self._handed.get(consumer)
        if handed is not None:
            handed.difference_update(entry_ids)

    async def claim_stale_jobs(self, consumer: str, min_idle_ms: int, count: int) -> list[Job]:
        """Jobs left by a dead consumer (``XAUTOCLAIM``) with their delivery counts: one script."""
        args: list[Any] = [GROUP, consumer, min_idle_ms, count]
        answered, rows = await self._delivering(
            consumer, lambda: self._run_once(self._autoclaim, [self.keys.jobs], args)
        )
        if not answered:
            return await self._unseen_jobs(consumer)
        return self._hand_out(consumer, rows)

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
        """Close both clients' connections."""
        await self._redis.aclose()
        await self._reads.aclose()


def _entries(reply: Any) -> list[tuple[str, list[str]]]:
    """``(entry id, flat fields)`` of an ``XREADGROUP`` reply (fields empty for a deleted entry)."""
    return [(entry_id, flat or []) for _, stream_entries in reply or [] for entry_id, flat in stream_entries]


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
