"""The embedded store: the same semantics as ``RedisStore`` for one process, in memory.

Every method runs without awaiting in between its reads and writes, so each is
atomic on the event loop just as a Lua script is atomic in Redis. Keys are named
as in Redis (``StoreKeys``) and expire by a clock that tests may replace
(``memory_values``); the job stream is in ``memory_jobs``.
"""

from __future__ import annotations

import copy
import json
import time
from collections.abc import Callable
from typing import Any

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import MessageRef, Sender

from .keys import DONE_TTL_SECONDS, new_thread_id, still_open
from .lookup import answered_key
from .memory_jobs import MemoryJobStream
from .records import ChatStatus, ClaimResult, DeliveryRecord, Payload, PendingRecord, SavedState


class MemoryStore(MemoryJobStream):
    """All gateway state in process memory; for a single gateway process."""

    def __init__(self, prefix: str = "clarigate", *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(prefix, clock=clock)
        self._cleanup: dict[str, float] = {}  # agent thread -> when its checkpoints may go

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

    async def has_thread_or_jobs(self, thread_key: str) -> bool:
        """The agent thread, or the turnstile's handed-out counter (gone once all are completed)."""
        keys = (self.keys.thread(thread_key), self.keys.seq(thread_key))
        return any(self._get(key) is not None for key in keys)

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
        """Mark the request answered once (noted for its thread unless declined: ``answered_key``)
        and append its follow-up job in the same step."""
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
        if response.response_kind != "declined":  # noted for its thread, as in Redis
            note = json.dumps({"request_id": request_id, "at": time.time()})
            self._set(self.keys.state(answered_key(record.thread_id)), note, DONE_TTL_SECONDS)
        if followup is not None:
            inbound_id, order_key, payload = followup
            self._append("answer", inbound_id, order_key, copy.deepcopy(payload))
        return ClaimResult(status="claimed", record=answered.model_copy(deep=True))

    # --- delivery records -------------------------------------------------------------------------
    async def record_delivery(
        self,
        inbound_id: str,
        plan: str,
        ttl_seconds: int,
        cleanup: tuple[str, float] | None = None,
        state: SavedState | None = None,
    ) -> DeliveryRecord:
        """Record the plan unless one is recorded (and schedule ``cleanup``, save ``state`` with a
        plan recorded now); the record in force."""
        if cleanup is not None:
            await self.schedule_thread_cleanup(*cleanup)
        key = self.keys.delivery(inbound_id)
        if self._get(key) is None:
            self._set(key, {"plan": plan}, ttl_seconds)
            if state is not None:
                await self.set_json(*state)
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

    # --- feedback on answers ----------------------------------------------------------------------
    async def cast_vote(self, answer: str, person: str, vote: str, ttl_seconds: int) -> str | None:
        """Set ``person``'s vote on ``answer``; the vote it replaced (None: the first)."""
        key = self.keys.votes(answer)
        votes = dict(self._get(key) or {})
        previous = votes.get(person)
        votes[person] = vote
        self._set(key, votes, ttl_seconds)
        return previous

    async def votes_on(self, answer: str) -> dict[str, str]:
        """Every person's vote on ``answer``."""
        return dict(self._get(self.keys.votes(answer)) or {})

    # --- health ---------------------------------------------------------------------------------
    async def ping(self) -> bool:
        """Always True: memory answers."""
        return True

    async def close(self) -> None:
        """Nothing to release."""
