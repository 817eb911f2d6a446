"""The one store interface behind which all gateway state lives.

Two implementations keep the same semantics: ``RedisStore`` (plain Redis 7,
shared by replicas, survives restarts) and ``MemoryStore`` (one process, the
embedded default). Every key carries the bot prefix.

Work queue and ordering: an accepted message becomes a *job* appended to one
stream (consumer group ``workers``). Each job carries ``order_key`` (the chat
thread key) and ``seq``, a per-key sequence number given at accept time; a job
may run only when ``next_seq(order_key) == seq``; completing it advances the
turnstile. So messages to one chat thread run one at a time in arrival order,
across replicas, and none is rejected as busy.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.messages import MessageRef, Sender

from .lookup import ThreadLookup, answered_key
from .records import (
    ChatStatus,
    ClaimResult,
    DeliveryRecord,
    HoldStatus,
    Job,
    Payload,
    PendingRecord,
    SavedState,
    Skip,
)


class Store(ABC):
    """All gateway state: threads, dedupe, pending clarifications, work queue, adapter state.

    Every method is safe to call again after a lost reply (a connection cut after the server acted,
    before its answer arrived), and a store may do so by itself: a repeated call has the effect and
    the result of one call. Methods whose command cannot simply be repeated (appending a job,
    claiming an answer, setting a dedupe marker) carry a value unique to the call, by which the
    repeat recognizes its own earlier effect; reading new jobs is not repeated but followed by a
    read of the consumer's own delivered-but-unseen entries.
    """

    prefix: str

    # --- chat thread -> agent thread ---------------------------------------------------------
    @abstractmethod
    async def thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """The agent thread for a chat thread, made (atomically) on first use; refreshes the TTL."""

    @abstractmethod
    async def new_thread_for_chat(self, thread_key: str, ttl_seconds: int) -> str:
        """Start a fresh agent thread for this chat thread (``/new``)."""

    @abstractmethod
    async def has_thread(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread."""

    @abstractmethod
    async def has_thread_or_jobs(self, thread_key: str) -> bool:
        """True when this chat thread is mapped to an agent thread or has jobs accepted and not yet
        completed (its first job makes the agent thread only when it runs); one round trip."""

    async def thread_with_pending(
        self, thread_key: str, ttl_seconds: int, state: SavedState | None = None
    ) -> tuple[str, PendingRecord | None]:
        """``thread_lookup``'s agent thread and open clarification."""
        found = await self.thread_lookup(thread_key, ttl_seconds, state)
        return found.thread_id, found.pending

    async def thread_lookup(
        self, thread_key: str, ttl_seconds: int, state: SavedState | None = None
    ) -> ThreadLookup:
        """``thread_for_chat``, that thread's ``pending_for_thread`` and, when it has none, its last
        answer's note (``answered_key``); ``state`` saved (as ``set_json`` would) when the thread
        has no open clarification (one round trip in Redis)."""
        thread_id = await self.thread_for_chat(thread_key, ttl_seconds)
        pending = await self.pending_for_thread(thread_id)
        if pending is None and state is not None:
            await self.set_json(*state)
        answered = await self.get_json(answered_key(thread_id)) if pending is None else None
        return ThreadLookup(thread_id, pending, answered if isinstance(answered, dict) else None)

    @abstractmethod
    async def thread_of_chat(self, thread_key: str) -> str | None:
        """The agent thread of a chat thread, or None; makes none and leaves the TTL alone."""

    @abstractmethod
    async def chat_status(self, thread_key: str) -> ChatStatus:
        """The chat thread's agent thread, its open clarification and how many of its jobs are
        outstanding (the turnstile: handed-out ``seq`` minus completed); changes nothing."""

    # --- accept: dedupe + durable enqueue in one step -----------------------------------------
    @abstractmethod
    async def accept_job(
        self,
        dedupe_key: str,
        kind: str,
        inbound_id: str,
        order_key: str,
        payload: Payload,
        seen_ttl: int,
    ) -> bool:
        """``SET NX`` the dedupe key, take the next ``seq`` for ``order_key``, append the job.

        One round trip (a Lua script). False when the dedupe key existed: nothing appended.
        ``payload`` may come as JSON text already (what the job's reader will parse)."""

    @abstractmethod
    async def forget(self, dedupe_key: str) -> None:
        """Release a dedupe key so a redelivery is processed again."""

    @abstractmethod
    async def first_time(self, key: str, ttl_seconds: int) -> bool:
        """Generic ``SET NX``: True the first time ``key`` is set within its TTL."""

    # --- pending clarifications -----------------------------------------------------------------
    @abstractmethod
    async def save_pending(self, record: PendingRecord) -> None:
        """Store the record, its token and the thread's pending pointer (TTL until ``expires_at``)."""

    @abstractmethod
    async def get_pending(self, request_id: str) -> PendingRecord | None:
        """The record (pending or answered), or None once expired."""

    @abstractmethod
    async def pending_for_token(self, token: str) -> PendingRecord | None:
        """The record behind a button token."""

    @abstractmethod
    async def pending_for_thread(self, thread_id: str) -> PendingRecord | None:
        """The open clarification of an agent thread, if any."""

    @abstractmethod
    async def set_message_ref(self, request_id: str, ref: MessageRef) -> None:
        """Remember the message that shows the request, to update it once answered."""

    @abstractmethod
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
        """Atomically mark the request answered (once) and enqueue its follow-up job.

        ``followup`` is ``(inbound_id, order_key, payload)`` for an ``answer`` job appended in
        the same atomic step, so one claim gives exactly one run. ``seen`` is ``(key, ttl)`` of
        the interaction's dedupe marker (as ``first_time``), set first in the same step: when it
        was set before, nothing else happens and the status is ``duplicate``. With ``current_in`` (a
        chat thread key) the claim happens only while that chat thread maps to the record's agent
        thread (or to none): after ``/new`` the status is ``restarted`` and nothing changes.
        """

    # --- work queue -------------------------------------------------------------------------
    @abstractmethod
    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        """New jobs for this consumer (``XREADGROUP``)."""

    @abstractmethod
    async def claim_stale_jobs(
        self, consumer: str, min_idle_ms: int, count: int, skip: Skip = None
    ) -> list[Job]:
        """Jobs left by a dead consumer for longer than ``min_idle_ms`` (``XAUTOCLAIM``).

        ``skip``: (platforms, cutoff unix time): jobs of those platforms (their order key's
        first part) accepted at or after the cutoff are left where they are.
        """

    async def decline_jobs(self, consumer: str, entry_ids: list[str]) -> None:
        """Hand back jobs this consumer did not run (it lacks their platform): ``release_jobs``,
        and the delivery that handed them here is not counted where possible."""
        await self.release_jobs(consumer, entry_ids)

    @abstractmethod
    async def keep_jobs(self, consumer: str, entry_ids: list[str]) -> dict[str, HoldStatus]:
        """Renew ``consumer``'s hold on ``entry_ids`` and say where each one stands.

        ``held``: still this consumer's, idle time reset. ``taken``: another consumer claimed it
        (this one stalled past the stale-claim time): it must neither reply nor take it back.
        ``gone``: acknowledged already (or the stream was lost). An entry another consumer holds
        is never taken from it here.
        """

    async def release_jobs(self, consumer: str, entry_ids: list[str]) -> None:  # noqa: B027 (optional)
        """Hand jobs this consumer still holds back at once (a replica stopping with work left):
        the next stale claim of any consumer takes them without waiting out the stale-claim
        time. By default nothing happens: they are claimed once that time has passed."""

    @abstractmethod
    async def next_seq(self, order_key: str) -> int:
        """The ``seq`` allowed to run next for ``order_key``."""

    @abstractmethod
    async def complete_job(self, job: Job) -> None:
        """Acknowledge the job, mark its inbound id done, advance the turnstile (one step)."""

    @abstractmethod
    async def requeue_job(self, job: Job) -> bool:
        """Move a job not run yet behind every job of its order key (one step): acknowledge it,
        advance the turnstile past it, append it again with the next ``seq`` (not done). False
        (nothing appended) when acknowledged already (this very move, its reply lost, re-sent)."""

    @abstractmethod
    async def is_done(self, inbound_id: str) -> bool:
        """True when this inbound id has had its reply."""

    @abstractmethod
    async def waiting_jobs(self, order_key: str, limit: int) -> list[Job]:
        """``order_key``'s jobs not completed, oldest first; read only, ``limit`` entries read."""

    # --- delivery records -------------------------------------------------------------------
    @abstractmethod
    async def record_delivery(
        self,
        inbound_id: str,
        plan: str,
        ttl_seconds: int,
        cleanup: tuple[str, float] | None = None,
        state: SavedState | None = None,
    ) -> DeliveryRecord:
        """Record a job's outputs (``plan``) unless some are recorded already; the record in force.

        The first plan recorded for an inbound id stays: a replica that ran the same job again,
        or this call re-sent after a lost reply, gets the first one back. ``cleanup`` is
        ``(thread_id, due)`` for ``schedule_thread_cleanup`` in the same step; ``state`` is saved
        as ``set_json`` would (what the plan refers to, e.g. its answer's feedback target) when this
        call records the plan. One round trip.
        """

    @abstractmethod
    async def delivery_record(self, inbound_id: str) -> DeliveryRecord | None:
        """The recorded outputs of a job and their outcomes, or None when nothing was recorded."""

    @abstractmethod
    async def mark_delivered(self, inbound_id: str, index: int, outcome: str) -> None:
        """Note how the delivery of item ``index`` ended (safe to repeat; the record's TTL stays)."""

    # --- upkeep: abandoned agent threads, the stream, dead consumers ---------------------------
    @abstractmethod
    async def schedule_thread_cleanup(self, thread_id: str, due: float) -> None:
        """Delete ``thread_id``'s checkpoints at ``due`` (unix time) unless scheduled later again."""

    @abstractmethod
    async def threads_due_for_cleanup(self, now: float, count: int) -> list[tuple[str, float]]:
        """Up to ``count`` agent threads whose cleanup is due at ``now``, with their due times."""

    @abstractmethod
    async def thread_cleaned(self, thread_id: str, due: float) -> None:
        """Unschedule ``thread_id`` if it is still due at ``due`` (a use since then keeps it)."""

    @abstractmethod
    async def trim_acknowledged(self) -> int:
        """Delete stream entries every reader is done with; never an unread or pending one."""

    @abstractmethod
    async def remove_idle_consumers(self, idle_seconds: float, keep: str) -> list[str]:
        """Delete consumers holding no jobs and silent for ``idle_seconds`` (never ``keep``)."""

    # --- adapter state (implements gateway.port.AdapterState) --------------------------------
    @abstractmethod
    async def get_json(self, key: str) -> Any | None:
        """JSON value under ``{prefix}:state:{key}``."""

    async def get_jsons(self, *keys: str) -> list[Any | None]:
        """The JSON values under several state keys (None where missing), in one read if it can."""
        return [await self.get_json(key) for key in keys]

    @abstractmethod
    async def set_json(self, key: str, value: Any, ttl_seconds: int) -> None:
        """Store a JSON value with a TTL."""

    @abstractmethod
    async def delete(self, key: str) -> None:
        """Remove a state key."""

    @abstractmethod
    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        """Take or renew a lease; False when another holder has it."""

    async def lease_and_read(
        self, name: str, holder: str, ttl_seconds: int, *keys: str
    ) -> tuple[bool, list[Any | None]]:
        """The lease taken (or found held by ``holder``) and ``get_jsons(*keys)`` in
        one step, nothing in between (a claim that decides with the state it reads): whether
        ``holder`` holds the lease, and the values."""
        return await self.acquire_lease(name, holder, ttl_seconds), await self.get_jsons(*keys)

    @abstractmethod
    async def release_lease(self, name: str, holder: str) -> None:
        """Release a lease held by ``holder``."""

    # --- feedback on answers ----------------------------------------------------------------------
    @abstractmethod
    async def cast_vote(self, answer: str, person: str, vote: str, ttl_seconds: int) -> str | None:
        """Make ``vote`` ``person``'s one vote on ``answer`` (the answer's votes then expire
        ``ttl_seconds`` from now) and return the vote it replaced: None for their first vote,
        ``vote`` itself for the same vote again. One atomic step; a call repeated after a lost
        reply gives the first call's answer."""

    @abstractmethod
    async def votes_on(self, answer: str) -> dict[str, str]:
        """Every person's vote on ``answer`` (person -> vote); empty once expired."""

    # --- stopping a run another process holds (``/cancel``: ``clarigate.gateway.flow.stops``) ---
    async def publish_stop(self, message: dict[str, Any], keep: bool = False) -> int:
        """Send ``message`` to every process of the gateway listening (``listen_stops``); how many
        got it, this one included (default: none, one process). ``keep`` (a stop): a process whose
        subscription is being made again meanwhile gets it once subscribed."""
        return 0

    async def listen_stops(self, deliver: Callable[[dict[str, Any]], None]) -> None:  # noqa: B027
        """From now on give ``deliver`` each message ``publish_stop`` sends (default: none come)."""

    # --- health -------------------------------------------------------------------------------
    @abstractmethod
    async def ping(self) -> bool:
        """True when the backing store answers."""

    @abstractmethod
    async def close(self) -> None:
        """Release connections."""
