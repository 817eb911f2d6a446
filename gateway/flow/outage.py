"""An agent, or its checkpointer, unavailable during a run: waited out, not apologised for.

The run is tried again in place for a few seconds (``UNAVAILABLE_RETRY``: a database restarting
costs nothing the person sees). An outage that outlasts ``NOTICE_AFTER`` seconds gets the one
"your message is kept" notice of the job, also while an attempt is still waiting on the
dependency (a connection pool waiting for PostgreSQL to come back). When the retries in place
stop, the turn hands the job back (``flow.agent_run``) and a later delivery runs it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.errors import AgentUnavailable
from clarigate.gateway.boundary.messages import Conversation, ErrorReply
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.notices import notice_for_text
from clarigate.gateway.store.base import Job

log = logging.getLogger("clarigate.gateway.flow.turn")

T = TypeVar("T")

#: An agent unavailable is tried again in place this long (seconds from the first attempt), the
#: job held, before the turn hands it back for a later delivery.
UNAVAILABLE_RETRY = RetryPolicy(first=0.25, cap=2.0, within=5.0)
#: An outage lasting this long after the first failure gets the "your message is kept" notice.
NOTICE_AFTER = 5.0


class KeptNotice:
    """The one "your message is kept" notice of a job: sent during its first delivery, once."""

    def __init__(self, outbox: Outbox, conv: Conversation, text: str, hint: Locale | None, job: Job) -> None:
        self.outbox = outbox
        self.conv = conv
        self.text = text
        self.hint = hint
        self.job = job
        self.sent = False

    async def send(self) -> None:
        """Tell the person their message is kept (nothing on a later delivery, nor a second time)."""
        if self.sent or self.job.deliveries != 1:
            return
        self.sent = True
        kept = notice_for_text("agent_unavailable", self.text, self.hint)
        await self.outbox.send_quietly(self.conv, ErrorReply(text=kept))


async def _notice_later(notice: KeptNotice) -> None:
    await asyncio.sleep(NOTICE_AFTER)
    await asyncio.shield(notice.send())  # a run ending meanwhile does not cut the notice short


async def through_outage(call: Callable[[], Awaitable[T]], notice: KeptNotice) -> T:
    """``call()``'s result, tried again while it raises ``AgentUnavailable`` (``UNAVAILABLE_RETRY``);
    the person is told once (``notice``) if the outage lasts ``NOTICE_AFTER`` seconds."""
    timer: asyncio.Task[None] | None = None

    def retrying(attempt: int, failure: BaseException, wait: float) -> None:
        nonlocal timer
        log.info("agent unavailable (attempt %d: %s): trying again in %.2f s", attempt, failure, wait)
        if timer is None:
            timer = asyncio.create_task(_notice_later(notice), name="kept-notice")

    try:
        return await UNAVAILABLE_RETRY.call(
            call, retry_on=lambda failure: isinstance(failure, AgentUnavailable), on_retry=retrying
        )
    finally:
        if timer is not None and not timer.done():
            timer.cancel()
