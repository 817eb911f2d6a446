"""An agent, its checkpointer or the store unavailable during a run: waited out, not apologised for.

The run is tried again in place for a few seconds (``UNAVAILABLE_RETRY``: a database restarting
costs nothing the person sees). An outage that outlasts ``NOTICE_AFTER`` seconds gets the one
"your message is kept" notice of the job, also while an attempt is still waiting on the
dependency (a connection pool waiting for PostgreSQL to come back). When the retries in place
stop, the turn hands the job back (``flow.agent_run``) and a later delivery runs it.

The store (Redis) unreachable during a job's run step is waited out in place the same way, for
as long as the delivery budget (``through_store_outage``): nobody can take the job meanwhile (the
stream is in that Redis), and once Redis is back its holder renews it before any other replica
may claim it, so the message runs once, here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import TypeVar

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.errors import AgentUnavailable
from clarigate.gateway.boundary.messages import AnswerJob, Conversation, MessageJob
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ErrorReply
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.notices import language_hint, notice_for_text
from clarigate.gateway.jobs.handle import JobHandle
from clarigate.gateway.store.connection import unreachable
from clarigate.gateway.store.records import Job

#: Deliveries of a job whose agent was unavailable, a stale-claim period apart (about an hour).
MAX_UNAVAILABLE_DELIVERIES = 120

log = logging.getLogger("clarigate.gateway.flow.turn")

T = TypeVar("T")

#: An agent unavailable is tried again in place this long (seconds from the first attempt), the
#: job held, before the turn hands it back for a later delivery.
UNAVAILABLE_RETRY = RetryPolicy(first=0.25, cap=2.0, within=5.0)
#: The store unreachable during a run step: tried again after 0.25 s, 0.5 s, … up to 5 s apart.
STORE_RETRY = RetryPolicy(first=0.25, cap=5.0)
#: An outage lasting this long after the first failure gets the "your message is kept" notice.
NOTICE_AFTER = 5.0


class KeptNotice:
    """The one "your message is kept" notice of a job: sent during its first delivery, once."""

    def __init__(
        self,
        outbox: Outbox,
        conv: Conversation,
        text: str,
        hint: Locale | None,
        job: Job,
        key: str = "agent_unavailable",
        quiet: bool = False,
    ) -> None:
        self.outbox = outbox
        self.conv = conv
        self.text = text
        self.hint = hint
        self.job = job
        self.key = key  # the catalog's notice: the agent, or the store, is away
        self.sent = quiet  # quiet: never sent (a thread that may not be the bot's)

    async def send(self) -> None:
        """Tell the person their message is kept (nothing on a later delivery, nor a second time)."""
        if self.sent or self.job.deliveries != 1:
            return
        self.sent = True
        kept = notice_for_text(self.key, self.text, self.hint)
        await self.outbox.send_quietly(self.conv, ErrorReply(text=kept))


def kept_for_job(outbox: Outbox, handle: JobHandle) -> KeptNotice:
    """The "your message is kept" notice of a job waiting for the store (made from its payload
    the first time, then the same one: the job tells it once)."""
    if handle.kept is None:
        handle.kept = _store_notice(outbox, handle.job)
    notice: KeptNotice = handle.kept
    return notice


async def wait_for_store(
    call: Callable[[], Awaitable[T]], outbox: Outbox, handle: JobHandle, within: float
) -> T:
    """A store call of a job's turn, waited out in place through a store outage (``within``
    seconds at most), the person told once when it lasts."""
    return await through_store_outage(call, lambda: kept_for_job(outbox, handle), within, unreachable)


def _store_notice(outbox: Outbox, job: Job) -> KeptNotice:
    quiet = False
    if job.kind == "answer":
        answer = AnswerJob.model_validate_json(job.payload_json)
        conv, text, hint = answer.conversation, answer.text, None
    else:
        message = MessageJob.model_validate_json(job.payload_json).message
        conv, text, hint = message.conversation, message.text, language_hint(message.language)
        # kept before its thread could be looked up: maybe not the bot's thread, not a word there
        quiet = message.only_in_known_thread
    return KeptNotice(outbox, conv, text, hint, job, key="store_unavailable", quiet=quiet)


async def _notice_later(notice: Callable[[], KeptNotice]) -> None:
    await asyncio.sleep(NOTICE_AFTER)
    await asyncio.shield(notice().send())  # a run ending meanwhile does not cut the notice short


async def through_outage(call: Callable[[], Awaitable[T]], notice: KeptNotice) -> T:
    """``call()``'s result, tried again while it raises ``AgentUnavailable`` (``UNAVAILABLE_RETRY``);
    the person is told once (``notice``) if the outage lasts ``NOTICE_AFTER`` seconds."""
    return await _waited_out(
        call,
        lambda: notice,
        UNAVAILABLE_RETRY,
        lambda failure: isinstance(failure, AgentUnavailable),
        "agent",
    )


async def through_store_outage(
    call: Callable[[], Awaitable[T]],
    notice: Callable[[], KeptNotice],
    within: float,
    unreachable: Callable[[BaseException], bool],
) -> T:
    """``call()``'s result, tried again in place while the store is ``unreachable`` (up to
    ``within`` seconds); the person is told once (``notice()``, made only then) if that lasts
    ``NOTICE_AFTER``."""
    policy = replace(STORE_RETRY, within=within)
    return await _waited_out(call, notice, policy, unreachable, "store")


async def _waited_out(
    call: Callable[[], Awaitable[T]],
    notice: Callable[[], KeptNotice],
    policy: RetryPolicy,
    retry_on: Callable[[BaseException], bool],
    what: str,
) -> T:
    timer: asyncio.Task[None] | None = None

    def retrying(attempt: int, failure: BaseException, wait: float) -> None:
        nonlocal timer
        log.info("%s unavailable (attempt %d: %s): trying again in %.2f s", what, attempt, failure, wait)
        if timer is None:
            timer = asyncio.create_task(_notice_later(notice), name="kept-notice")

    try:
        return await policy.call(call, retry_on=retry_on, on_retry=retrying)
    finally:
        if timer is not None and not timer.done():
            timer.cancel()
