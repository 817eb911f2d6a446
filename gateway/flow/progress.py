"""The "working…" indicator of one run: shown once the run outlasts a moment, cleared after it.

A reply that comes within ``progress_after_seconds`` needs no indicator: showing one would
flash a message (or a typing status) and spend two platform API calls on it. A run that
takes longer shows it then, and whatever was shown is cleared when the run ends, also when
the send of the indicator was still on its way at that moment.

A job handed back because the agent was away (``note_away``) was shown "working…" and told that
the message is kept: the delivery that follows shows nothing before it reaches the agent
(``handed_back_before``; ``flow.run_progress`` shows it then), so a wait for the agent does not
print "Working…" at each try, and the try that runs shows it once. A job taken over from a
replica that stopped or crashed shows it as a first try does.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from typing import TYPE_CHECKING

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ProgressUpdate
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job

if TYPE_CHECKING:
    from clarigate.gateway.flow.live import LiveReply

CLEAR_PROGRESS_SECONDS = 2.0  #: a cancelled run's time to clear its "working…" (shutdown waits)
#: How long the note of a hand-back for the agent away outlives it (beyond the stale-claim time).
AWAY_NOTE_SECONDS = 3600


def away_key(inbound_id: str) -> str:
    """The store key noting the delivery of a job that handed it back because the agent was away."""
    return f"away:{inbound_id}"


async def note_away(store: Store, job: Job, stale_after: float) -> None:
    """Note that this delivery of ``job`` hands it back because the agent is away (the person was
    shown "working…" and told the message is kept): the next delivery shows none before it
    reaches the agent (``handed_back_before``)."""
    with contextlib.suppress(Exception):  # not noted: the next try shows "working…", no harm
        await store.set_json(away_key(job.inbound_id), job.deliveries, int(stale_after) + AWAY_NOTE_SECONDS)


async def handed_back_before(store: Store, job: Job) -> bool:
    """True when the delivery just before this one of ``job`` handed it back because the agent was
    away (``note_away``): this try shows its progress only once it reaches the agent. False for a
    first delivery, or one taking over from a replica that stopped mid-run (shown as usual)."""
    if job.deliveries > 1:
        with contextlib.suppress(Exception):  # unreadable: shown, as on a first try
            return bool(await store.get_json(away_key(job.inbound_id)) == job.deliveries - 1)
    return False


class WorkingIndicator:
    """``start()`` when the run starts, ``await finish()`` when it is over (however it ended)."""

    def __init__(self, outbox: Outbox, conversation: Conversation, locale: Locale, after: float) -> None:
        self.outbox = outbox
        self.conversation = conversation
        self.locale = locale
        self.after = after
        self._timer: asyncio.TimerHandle | None = None
        self._showing: asyncio.Task[MessageRef | None] | None = None

    async def start(self) -> None:
        """Arm a timer that shows the indicator after ``after`` seconds; 0 shows it before returning,
        ``math.inf`` never."""
        if math.isinf(self.after):
            return
        if self.after > 0:
            self._timer = asyncio.get_running_loop().call_later(self.after, self._begin)
            return
        self._begin()
        assert self._showing is not None
        await asyncio.shield(self._showing)

    def _begin(self) -> None:
        self._timer = None
        self._showing = asyncio.get_running_loop().create_task(self._show())

    async def _show(self) -> MessageRef | None:
        update = ProgressUpdate(state="started", locale=self.locale)
        return await self.outbox.send_quietly(self.conversation, update)

    async def finish(self, reply_follows: bool = True) -> None:
        """Clear what was shown; a timer that has not fired yet is simply dropped.

        ``reply_follows``: the run's reply is sent next (the adapter may edit the indicator into it).
        """
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        showing, self._showing = self._showing, None
        if showing is None:
            return
        ref: MessageRef | None = None
        with contextlib.suppress(Exception):  # a failed send was logged by send_quietly
            ref = await asyncio.shield(showing)  # its send may still be on its way: wait for it
        done = ProgressUpdate(state="done", ref=ref, reply_follows=reply_follows)
        await self.outbox.send_quietly(self.conversation, done)


async def clear_cancelled(live: LiveReply | None, working: WorkingIndicator | None) -> None:
    """Stopping, or taken over: the job runs again elsewhere with its own "working…"; a live
    message stays as it is, for the replica that takes the job over to finish."""
    with contextlib.suppress(BaseException):
        if live is not None:
            await asyncio.wait_for(live.finish(), CLEAR_PROGRESS_SECONDS)
        if working is not None:
            await asyncio.wait_for(working.finish(reply_follows=False), CLEAR_PROGRESS_SECONDS)
