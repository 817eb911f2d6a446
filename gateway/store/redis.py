"""The Redis store: plain Redis 7, shared by replicas, one round trip per state change.

Every step that must be atomic (accept, claim, complete, lease) is a Lua script sent with
``EVALSHA``, over redis-py's asyncio client (``connection.open_redis``: hiredis parser, TCP
keepalive, health checks, TLS, Sentinel). ``round_trips`` counts each command or script sent,
so the benchmark can report the cost per message.

The clients and the rules for re-sending after a lost reply are in ``redis_commands``; the job
stream (reading, holding, claiming and completing jobs) is in ``redis_jobs``, the stop channel
in ``redis_stops``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import MessageRef, Sender

from . import scripts
from .keys import (
    DONE_TTL_SECONDS,
    ORDER_TTL_SECONDS,
    answered_fields,
    call_mark,
    compact_json,
    decode_record,
    encode_record,
    new_thread_id,
    payload_text,
    still_open,
    to_millis,
)
from .lookup import ThreadLookup
from .records import ChatStatus, ClaimResult, DeliveryRecord, Payload, PendingRecord, SavedState
from .redis_commands import fields_of
from .redis_stops import RedisStopChannel


class RedisStore(RedisStopChannel):
    """All gateway state in Redis under ``prefix``; the constructor does not connect."""

    def __init__(self, url: str, prefix: str) -> None:
        super().__init__(url, prefix)
        self._accept = self._script(scripts.ACCEPT_JOB)
        self._claim = self._script(scripts.CLAIM_ANSWER)
        self._thread = self._script(scripts.THREAD_FOR_CHAT)
        self._thread_pending = self._script(scripts.THREAD_WITH_PENDING)
        self._follow = self._script(scripts.FOLLOW_POINTER)
        self._save = self._script(scripts.SAVE_PENDING)
        self._set_ref = self._script(scripts.SET_MESSAGE_REF)
        self._record = self._script(scripts.RECORD_DELIVERY)
        self._due_threads = self._script(scripts.DUE_THREADS)
        self._thread_cleaned = self._script(scripts.THREAD_CLEANED)
        self._lease = self._script(scripts.ACQUIRE_LEASE)
        self._unlease = self._script(scripts.RELEASE_LEASE)
        self._lease_read = self._script(scripts.LEASE_AND_READ)
        self._vote = self._script(scripts.CAST_VOTE)

    # --- chat thread -> agent thread ---------------------------------------------------------
    async def thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """The agent thread for a chat thread, made atomically on first use; refreshes the TTL."""
        args = [new_thread_id(), to_millis(ttl_seconds)]
        return str(await self._run(self._thread, [self.keys.thread(thread_key)], args))

    async def thread_lookup(
        self, thread_key: str, ttl_seconds: int, state: SavedState | None = None
    ) -> ThreadLookup:
        """The agent thread (made on first use, TTL refreshed), its open clarification and its last
        answer's note, ``state`` saved when none is open: one script (two when the thread points
        at a closed record)."""
        keys = [self.keys.thread(thread_key)]
        args: list[Any] = [new_thread_id(), to_millis(ttl_seconds), self.prefix]
        if state is not None:
            keys.append(self.keys.state(state[0]))
            args += [json.dumps(state[1]), to_millis(state[2])]
        thread_id, *found = await self._run(self._thread_pending, keys, args)
        raw = found[1] if len(found) > 1 else None
        pending = still_open(decode_record(raw) if raw else None)
        if len(found) > 1 and pending is None and state is not None:  # a record (or gone), not open
            await self.set_json(*state)
        answered = json.loads(found[0]) if found and found[0] and pending is None else None
        return ThreadLookup(str(thread_id), pending, answered if isinstance(answered, dict) else None)

    async def new_thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """Start a fresh agent thread for this chat thread (``/new``)."""
        thread_id = new_thread_id()
        await self._command("SET", self.keys.thread(thread_key), thread_id, "PX", to_millis(ttl_seconds))
        return thread_id

    async def has_thread(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread."""
        return bool(await self._command("EXISTS", self.keys.thread(thread_key)))

    async def has_thread_or_jobs(self, thread_key: str) -> bool:
        """The agent thread, or the turnstile's handed-out counter (gone once all are completed)."""
        keys = (self.keys.thread(thread_key), self.keys.seq(thread_key))
        return bool(await self._command("EXISTS", *keys))

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
        """Store the record, its token and the thread's pending pointer until ``expires_at``, and
        index it as open (``StoreKeys.open_asks``): one script."""
        keys = [
            self.keys.ask(record.request_id),
            self.keys.token(record.token),
            self.keys.pending(record.thread_id),
            self.keys.open_asks,
        ]
        expiry, created = int(record.expires_at * 1000), repr(float(record.created_at))
        args: list[Any] = [record.request_id, expiry, created, *encode_record(record)]
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
        """Set the dedupe marker, mark the request answered once (noted for its thread unless
        declined: ``answered_key``), append its follow-up job: one script."""
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
            repr(time.time()) if response.response_kind != "declined" else "",  # the answer noted
            to_millis(DONE_TTL_SECONDS),
        ]
        status, *raw = await self._run(self._claim, keys, args)
        return ClaimResult(status=status, record=decode_record(raw[0]) if raw else None)

    # --- delivery records -------------------------------------------------------------------------
    async def record_delivery(
        self,
        inbound_id: str,
        plan: str,
        ttl_seconds: int,
        cleanup: tuple[str, float] | None = None,
        state: SavedState | None = None,
    ) -> DeliveryRecord:
        """Record the plan unless one is recorded (``HSETNX``), schedule ``cleanup``, save ``state``
        with a plan recorded now: one script."""
        keys = [self.keys.delivery(inbound_id), self.keys.cleanup]
        thread_id, due = cleanup or ("", 0.0)
        args: list[Any] = [plan, to_millis(ttl_seconds), thread_id, repr(due)]
        if state is not None:
            key, value, state_ttl = state
            keys.append(self.keys.state(key))
            args += [json.dumps(value), to_millis(state_ttl)]
        flat = await self._run(self._record, keys, args)
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

    # --- adapter state --------------------------------------------------------------------------
    async def get_json(self, key: str) -> Any | None:
        """JSON value under ``{prefix}:state:{key}``."""
        raw = await self._command("GET", self.keys.state(key))
        return None if raw is None else json.loads(raw)

    async def get_jsons(self, *keys: str) -> list[Any | None]:
        """JSON values under several state keys: one ``MGET``."""
        found = await self._command("MGET", *(self.keys.state(key) for key in keys))
        return [None if raw is None else json.loads(raw) for raw in found]

    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with a TTL."""
        await self._command("SET", self.keys.state(key), json.dumps(value), "PX", to_millis(ttl_seconds))

    async def delete(self, key: str) -> None:
        """Remove a state key."""
        await self._command("DEL", self.keys.state(key))

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew (holder only) a lease; False when another holder has it."""
        return bool(await self._run(self._lease, [self.keys.lease(name)], [holder, to_millis(ttl_seconds)]))

    async def lease_and_read(
        self, name: str, holder: str, ttl_seconds: int, *keys: str
    ) -> tuple[bool, list[Any | None]]:
        """The lease taken (or found held by ``holder``) and ``get_jsons(*keys)`` in one script."""
        names = [self.keys.lease(name), *(self.keys.state(key) for key in keys)]
        held, *found = await self._run(self._lease_read, names, [holder, to_millis(ttl_seconds)])
        return bool(held), [None if raw is None else json.loads(raw) for raw in found]

    async def release_lease(self, name: str, holder: str) -> None:
        """Release a lease held by ``holder`` (compare-and-delete)."""
        await self._run(self._unlease, [self.keys.lease(name)], [holder])

    # --- feedback on answers ----------------------------------------------------------------------
    async def cast_vote(self, answer: str, person: str, vote: str, ttl_seconds: int) -> str | None:
        """Set ``person``'s vote on ``answer``: one script, safe to re-send (``scripts.CAST_VOTE``)."""
        args = [person, vote, call_mark(), to_millis(ttl_seconds)]
        previous = await self._run(self._vote, [self.keys.votes(answer)], args)
        return str(previous) or None

    async def votes_on(self, answer: str) -> dict[str, str]:
        """Every person's vote on ``answer`` (the vote is what comes before the first ``|``)."""
        found = await self._command("HGETALL", self.keys.votes(answer))
        fields = found if isinstance(found, dict) else fields_of(found or [])
        return {person: value.split("|", 1)[0] for person, value in fields.items()}

    # --- health ---------------------------------------------------------------------------------
    async def ping(self) -> bool:
        """True when Redis answers within 3 s; never raises."""
        try:
            async with asyncio.timeout(3):
                return bool(await self._command("PING"))
        except Exception:  # refused, timed out, auth failed: all mean "not ready"
            return False

    async def close(self) -> None:
        """Close the clients' connections."""
        await self._stop_listening()
        await self._redis.aclose()
        await self._reads.aclose()
        await self._webhook.aclose()


def _delivery_record(flat: list[str]) -> DeliveryRecord | None:
    """A delivery record from its hash as a flat ``[field, value, …]`` list (None when empty)."""
    fields = fields_of(flat or [])
    plan = fields.pop("plan", None)
    if plan is None:
        return None
    return DeliveryRecord(plan, {int(index): outcome for index, outcome in fields.items()})
