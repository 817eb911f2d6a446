"""The "working…" indicator of one run: shown once the run outlasts a moment, cleared after it.

A reply that comes within ``progress_after_seconds`` needs no indicator: showing one would
flash a message (or a typing status) and spend two platform API calls on it. A run that
takes longer shows it then, and whatever was shown is cleared when the run ends, also when
the send of the indicator was still on its way at that moment.
"""

from __future__ import annotations

import asyncio
import contextlib

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef, ProgressUpdate
from clarigate.gateway.boundary.outbound import Outbox


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
        """Arm a timer that shows the indicator after ``after`` seconds; 0 shows it before returning."""
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
