"""What ``clarigate admin`` reads and changes in a bot's live store (Redis, under its bot id).

Reads go straight to the key layout (``clarigate.gateway.store.keys``); changes go through the store's
own scripts where one exists (completing a job, claiming an answer, a new thread), so the
admin never leaves state the gateway would not leave itself.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from typing import Any

from redis.exceptions import ResponseError

from clarigate.agent.protocol import HumanInputResponse, answer_declined
from clarigate.gateway.boundary.messages import AnswerJob, Sender
from clarigate.gateway.boundary.outbound_items import ClarificationClosed
from clarigate.gateway.flow.answers import answered_by, answered_line, run_text_for, view_of
from clarigate.gateway.flow.claim import claim_answer
from clarigate.gateway.flow.closing import dismissed_in
from clarigate.gateway.jobs.upkeep import DEAD_CONSUMER_SECONDS
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.preflight import first_line
from clarigate.gateway.store import scripts
from clarigate.gateway.store.connection import open_redis
from clarigate.gateway.store.keys import (
    DONE_TTL_SECONDS,
    GROUP,
    ORDER_TTL_SECONDS,
    StoreKeys,
    decode_record,
    to_millis,
)
from clarigate.gateway.store.records import PendingRecord
from clarigate.gateway.store.redis import RedisStore

#: Who an operator's change is recorded as.
OPERATOR = Sender(user_id="operator", display_name="an operator")
#: ``pending --cancel`` of a question its chat has left (``/new``, ``reset-thread`` since it was asked).
LEFT_THREAD_NOTE = (
    "chat {chat} was started over since this question was asked: closed without telling the agent "
    "(nothing runs on the thread the chat left)"
)
#: Where the question's message cannot be closed from here and no turn of the agent will close it.
MESSAGE_LEFT = "the question's message is left as it is (a click on it is refused)"


class AdminError(Exception):
    """A request the admin cannot carry out (unknown id, nothing pending, no Redis)."""


def no_stream_yet(exc: ResponseError) -> bool:
    """True when Redis's reply says the stream or its group does not exist yet ("no such key",
    "NOGROUP …"): nothing was ever queued or read. Any other reply, and any failure to reach
    Redis, is not that, and is said as it is."""
    text = str(exc)
    return text.startswith("NOGROUP") or text.lower().startswith("no such key")


def is_entry_id(text: str) -> bool:
    """True for a stream entry id as Redis gives them and ``admin backlog`` shows them,
    ``<ms>-<seq>`` (a bare ``<ms>`` would name a range of entries to Redis, not one)."""
    return re.fullmatch(r"[0-9]+-[0-9]+", text) is not None


def entry_age(entry_id: str, now: float | None = None) -> float:
    """Seconds since the stream entry ``<ms>-<seq>`` was added."""
    ms = entry_id.partition("-")[0]
    return max((now or time.time()) - int(ms) / 1000, 0.0) if ms.isdigit() else 0.0


class Admin:
    """One bot's store, for operators. Use as ``async with Admin(config) as admin``."""

    def __init__(self, config: GatewayConfig) -> None:
        if not config.redis_url:
            raise AdminError("REDIS_URL is not set: the admin works on the bot's Redis store")
        self.config = config
        self.keys = StoreKeys(config.bot_id)
        # the store's connection set-up (Sentinel, TLS, keepalive, retries), redis-py's reply shapes
        try:
            self.redis: Any = open_redis(config.redis_url, parsed_replies=True)
        except ValueError as exc:  # a URL no client can use, in serve's words
            raise AdminError(f"REDIS_URL cannot be used: {first_line(exc)}") from exc
        self.store = RedisStore(config.redis_url, config.bot_id)

    async def __aenter__(self) -> Admin:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.redis.aclose()
        await self.store.close()

    @property
    def _where(self) -> str:
        """Where a "not found" looked: the bot id (the default one, on a machine without the bot's
        CLARIGATE_BOT_ID or --config, holds nothing)."""
        return f"under bot id {self.config.bot_id!r}"

    async def _scan(self, pattern: str) -> list[str]:
        return sorted([key async for key in self.redis.scan_iter(match=pattern, count=500)])

    # --- threads ------------------------------------------------------------------------------

    async def threads(self, chat: str | None = None) -> list[dict[str, Any]]:
        """Chat threads and their agent threads; ``chat`` keeps those whose key contains it."""
        prefix = self.keys.thread("")
        ttl = self.config.thread_ttl_seconds
        rows = []
        for key in await self._scan(f"{prefix}*"):
            thread_key = key[len(prefix) :]
            if chat and chat not in thread_key:
                continue
            thread_id, pttl = await self.redis.get(key), await self.redis.pttl(key)
            if thread_id is None:
                continue
            idle = max(ttl - pttl / 1000, 0.0) if pttl and pttl > 0 else None
            open_request = await self.redis.get(self.keys.pending(thread_id))
            rows.append(
                {
                    "chat": thread_key,
                    "thread_id": thread_id,
                    "idle_seconds": round(idle) if idle is not None else None,
                    "open_request": open_request,
                }
            )
        return rows

    # --- clarifications -----------------------------------------------------------------------

    async def open_records(self) -> list[PendingRecord]:
        """The open clarifications' records."""
        now = time.time()
        records = []
        for key in await self._scan(self.keys.ask("*")):
            record = decode_record(await self.redis.hgetall(key))
            if record is not None and record.status == "pending" and record.expires_at > now:
                records.append(record)
        return records

    async def pending(self) -> list[dict[str, Any]]:
        """Open clarifications, oldest first."""
        now = time.time()
        rows = []
        for record in await self.open_records():
            rows.append(
                {
                    "request_id": record.request_id,
                    "chat": record.conversation.thread_key,
                    "thread_id": record.thread_id,
                    "question": record.request.question,
                    "asked_by": record.asked_by.user_id if record.asked_by else None,
                    "age_seconds": round(now - record.created_at),
                }
            )
        return sorted(rows, key=lambda row: -row["age_seconds"])

    async def open_by_age(self, bounds: Sequence[float]) -> list[int]:
        """How many clarifications are open in each age band (``bounds``: each band's upper bound in
        seconds, youngest first, ``inf`` last), from the index of open ones (``StoreKeys.open_asks``):
        one round trip of a fixed number of commands, however many records are stored.

        Entries older than ``pending_ttl_seconds`` are dropped first (their records expired
        unanswered); an answer removes its entry as it is claimed.
        """
        now = time.time()
        key = self.keys.open_asks
        pipe = self.redis.pipeline(transaction=False)
        pipe.zremrangebyscore(key, "-inf", f"({now - self.config.pending_ttl_seconds}")
        younger = 0.0
        for bound in bounds:
            newest = "+inf" if younger == 0 else f"{now - younger}"
            oldest = "-inf" if bound == float("inf") else f"({now - bound}"
            pipe.zcount(key, oldest, newest)
            younger = bound
        _, *counts = await pipe.execute()
        return [int(count) for count in counts]

    async def open_question(self, request_id: str) -> PendingRecord:
        """The open clarification ``request_id``; "no open clarification" when there is none."""
        record = await self.store.get_pending(request_id)
        if record is None or record.status != "pending":
            raise AdminError(
                f"no open clarification {request_id!r} {self._where} (see `clarigate admin pending`)"
            )
        return record

    async def cancel(
        self,
        request_id: str,
        adapters: dict[str, Any] | None = None,
        unavailable: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """Close an open clarification as declined; the agent's next turn is queued with the decline,
        unless its chat was started over since it was asked (``/new``, ``reset-thread``): nothing
        runs on the thread the chat left, and the result says so (``agent_note``).

        With the platform's adapter (``adapters``), the question message is closed at once too;
        without it (the platform is not configured here, or ``unavailable`` says why it could not
        be built) the replica that runs the queued turn closes it, and the result says so.
        """
        record = await self.open_question(request_id)
        platform = record.conversation.platform
        adapter = (adapters or {}).get(platform)
        response = answer_declined(record.request, answered_by(platform, OPERATOR), "cancelled")
        followup = self._declined_turn(record, response, adapter is None)
        chat = record.conversation.thread_key  # the turn queued only while the chat is on its thread
        claim = await claim_answer(self.store, request_id, OPERATOR, response, followup, current_in=chat)
        current = claim.status != "restarted"
        if not current:  # the chat started over since: closed, nothing runs on the thread it left
            claim = await claim_answer(self.store, request_id, OPERATOR, response)
        if claim.status != "claimed" or claim.record is None:
            raise AdminError(f"clarification {request_id!r} was {claim.status.replace('_', ' ')} meanwhile")
        metrics.DECLINED.inc()
        result: dict[str, Any] = {"request_id": request_id, "cancelled": True, "message_closed": False}
        if not current:
            result["agent_note"] = LEFT_THREAD_NOTE.format(chat=chat)
        if adapter is None:
            why = (unavailable or {}).get(platform) or self._not_configured(platform)
            after = "the replica that runs the agent's next turn closes it" if current else MESSAGE_LEFT
            result["message_note"] = f"{why}: {after}"
            return result
        view = view_of(claim.record)
        closed = ClarificationClosed(view=view, answered_line=answered_line(view))
        try:
            await adapter.send(record.conversation, closed)
            result["message_closed"] = True
        except Exception as exc:  # the decline stands (and the agent's turn, if queued, tells the chat)
            result["message_error"] = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return result

    @staticmethod
    def _declined_turn(
        record: PendingRecord, response: HumanInputResponse, close_message: bool
    ) -> tuple[str, str, str]:
        """The agent's next turn told of the decline, as a Cancel click queues it: its inbound id,
        order key and payload (``close_message``: that replica closes the question's message)."""
        payload = AnswerJob(
            conversation=record.conversation,
            thread_id=record.thread_id,
            request_id=record.request_id,
            response=response,
            sender=OPERATOR,
            text=run_text_for(record, response),
            close_message=close_message,
            dismissed_in=dismissed_in(record, response),  # a graph refusing it: the chat is told
        ).model_dump_json()
        return f"answer:{record.request_id}", record.conversation.thread_key, payload

    def _not_configured(self, platform: str) -> str:
        """Why this process has no adapter for ``platform``: its credentials are not set here."""
        known = self.config.known_platforms().get(platform)
        hint = known.credential_hint() if known is not None else ""
        return f"{platform} is not configured here" + (f" (it needs {hint})" if hint else "")

    # --- the stream ---------------------------------------------------------------------------

    async def stream_counts(self) -> tuple[int, Any, list[Any]]:
        """The stream's length, its group's pending summary and its oldest entry (three commands)."""
        length = await self.redis.xlen(self.keys.jobs)
        summary: Any = {"pending": 0, "consumers": []}
        if length:
            try:
                summary = await self.redis.xpending(self.keys.jobs, GROUP)
            except ResponseError as exc:
                if not no_stream_yet(exc):
                    raise
                summary = {"pending": 0, "consumers": []}  # no group yet: nothing was ever read
        return length, summary, await self.redis.xrange(self.keys.jobs, count=1)

    async def backlog(self, held_jobs: bool = True) -> dict[str, Any]:
        """Stream length, entries waiting, the oldest entry, pending per consumer and (with
        ``held_jobs``) the stuck jobs."""
        length, summary, oldest = await self.stream_counts()
        held = []
        if summary["pending"] and held_jobs:
            for item in await self.redis.xpending_range(self.keys.jobs, GROUP, min="-", max="+", count=50):
                entry_id = item["message_id"]
                found = await self.redis.xrange(self.keys.jobs, entry_id, entry_id)
                fields = dict(found[0][1]) if found else {}
                held.append(
                    {
                        "entry_id": entry_id,
                        "inbound_id": fields.get("inbound_id"),
                        "chat": fields.get("order_key"),
                        "consumer": item["consumer"],
                        "idle_seconds": round(item["time_since_delivered"] / 1000),
                        "deliveries": item["times_delivered"],
                    }
                )
        return {
            "length": length,
            "waiting": max(length - int(summary["pending"]), 0),
            "pending": int(summary["pending"]),
            "oldest_entry": oldest[0][0] if oldest else None,
            "oldest_age_seconds": round(entry_age(oldest[0][0])) if oldest else 0,
            "pending_per_consumer": {c["name"]: int(c["pending"]) for c in summary.get("consumers") or []},
            "held": held,
        }

    async def _entry(self, entry_id: str) -> tuple[dict[str, str], dict[str, Any] | None]:
        """The job's fields and who holds it; "no job" for an id that names none (an inbound id such
        as ``slack:Ev…`` given for its entry id, which Redis calls an invalid stream ID, included)."""
        try:
            found = (
                await self.redis.xrange(self.keys.jobs, entry_id, entry_id) if is_entry_id(entry_id) else []
            )
        except ResponseError as exc:
            if "Invalid stream ID" not in str(exc):
                raise
            found = []
        if not found:
            raise AdminError(
                f"no job {entry_id!r} in the stream {self._where} (entry ids look like "
                "1796000000000-0: see the entry_id column of `clarigate admin backlog`)"
            )
        try:
            owner = await self.redis.xpending_range(
                self.keys.jobs, GROUP, min=entry_id, max=entry_id, count=1
            )
        except ResponseError as exc:
            if not no_stream_yet(exc):
                raise
            owner = []  # no group yet: no worker has read anything
        return dict(found[0][1]), (owner[0] if owner else None)

    async def describe(self, entry_id: str) -> str:
        """One line naming a job, for the confirmation question."""
        fields, owner = await self._entry(entry_id)
        holder = f"held by {owner['consumer']}" if owner else "not read yet"
        return f"job {entry_id} ({fields.get('inbound_id')}, chat {fields.get('order_key')}, {holder})"

    async def redrive(self, entry_id: str) -> dict[str, Any]:
        """Make a held job look long idle: the next stale claim of any live replica runs it again."""
        _, owner = await self._entry(entry_id)
        if owner is None:
            raise AdminError(f"job {entry_id} is not held by any worker: it runs when its turn comes")
        idle_ms = 10 * 24 * 3600 * 1000
        await self.redis.xclaim(
            self.keys.jobs, GROUP, owner["consumer"], 0, [entry_id], idle=idle_ms, justid=True
        )
        return {"entry_id": entry_id, "redriven": True, "consumer": owner["consumer"]}

    async def drop(self, entry_id: str) -> dict[str, Any]:
        """Remove a job without running it, held by a worker or not read yet: deleted, marked done
        (a redelivery is not run), its chat thread's turnstile advanced (later jobs go ahead)."""
        fields, owner = await self._entry(entry_id)
        chat = fields.get("order_key", "")
        keys = [self.keys.jobs, self.keys.done(fields.get("inbound_id", "")), self.keys.seq(chat)]
        args = [GROUP, entry_id, int(fields.get("seq") or 0), to_millis(DONE_TTL_SECONDS)]
        script = self.redis.register_script(scripts.DROP_JOB)
        was = str(
            await script(keys=[*keys, self.keys.next(chat)], args=[*args, to_millis(ORDER_TTL_SECONDS)])
        )
        if was in ("gone", "completed"):  # between the look-up and the script
            raise AdminError(f"job {entry_id} is completed already: nothing dropped")
        holder = f"held by {owner['consumer']}" if was == "held" and owner else "held by a worker"
        was = "not read yet" if was == "unread" else holder
        return {"entry_id": entry_id, "dropped": True, "was": was, "inbound_id": fields.get("inbound_id")}

    # --- consumers ----------------------------------------------------------------------------

    async def consumers(self) -> list[dict[str, Any]]:
        """The stream's consumers: pending jobs and idle time."""
        try:
            found = await self.redis.xinfo_consumers(self.keys.jobs, GROUP)
        except ResponseError as exc:
            if not no_stream_yet(exc):
                raise
            return []  # no stream or no group yet
        return [
            {"name": c["name"], "pending": int(c["pending"]), "idle_seconds": round(int(c["idle"]) / 1000)}
            for c in found
        ]

    async def remove_consumer(self, name: str) -> dict[str, Any]:
        """Remove a consumer that holds no job (one that holds some: re-drive them first)."""
        known = {c["name"]: c for c in await self.consumers()}
        if name not in known:
            raise AdminError(f"no consumer {name!r} {self._where} (see `clarigate admin consumers`)")
        if known[name]["pending"]:
            raise AdminError(
                f"consumer {name} holds {known[name]['pending']} job(s): re-drive them first "
                "(`clarigate admin backlog --redrive ENTRY`), or wait for a live replica to claim them"
            )
        await self.redis.xgroup_delconsumer(self.keys.jobs, GROUP, name)
        return {"removed": name}

    async def prune_consumers(self, idle_seconds: float = DEAD_CONSUMER_SECONDS) -> list[str]:
        """Remove every consumer with nothing pending that has been idle at least ``idle_seconds``
        (by default as every running gateway does, ``clarigate.gateway.jobs.upkeep``): the store's
        one script, so a job handed to one meanwhile is never removed with it."""
        return await self.store.remove_idle_consumers(idle_seconds, keep="")
