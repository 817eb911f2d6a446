"""What shows a run is under way (``clarigate.gateway.flow.agent_run``): its live message where
the platform shows one and streaming is on (``flow.live``), or else a "working…" indicator
(``flow.progress``); and the live message an earlier attempt left, closed.

A try that follows a hand-back because the agent was away (``progress.handed_back_before``) is
held: nothing shows while its attempts are refused (the person saw "working…" and was told the
message is kept), and its progress starts, as a first try's would, once it reaches the agent: the
agent's first event of the run (given for a held try on every platform), or else an attempt of the
agent call that goes on ``REACHED_AFTER`` seconds without being refused (``RunProgress``).

``ShowsProgress`` is a part of ``AgentRun``, which it is mixed into.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from clarigate.agent.events import RunEvent
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import LiveEnd
from clarigate.gateway.flow.live import LiveReply, LiveResult, live_key
from clarigate.gateway.flow.progress import WorkingIndicator, handed_back_before
from clarigate.gateway.flow.stops import RunStops
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job

T = TypeVar("T")

#: A held try's attempt of the agent call that goes on this long without being refused nor any event
#: of the run reached the agent: its progress starts then. An agent away is not always refused at
#: once: a connect or pool timeout (the server runner's HTTP calls, the checkpointer's connection
#: pool: 30 s each), a slow proxy's 5xx are ``AgentUnavailable`` too, so this is well past them
#: (a run that reached the agent starts it sooner, on its first event).
REACHED_AFTER = 45.0


@dataclass
class RunProgress:
    """What shows the run is under way: its live message, or else a "working…" indicator.

    ``held``: a try after a hand-back for the agent away, not started yet: started (at once, as a
    run past ``progress_after_seconds``) once the run reaches the agent (its first event,
    ``on_event``; or an attempt going on ``after`` seconds, ``attempt``); ``settle()`` when the
    agent call is over, before it is finished."""

    live: LiveReply | None
    working: WorkingIndicator | None
    held: bool = False
    after: float = 0.0  # a held try: how long an attempt goes on before its progress starts
    _timer: asyncio.TimerHandle | None = field(default=None, repr=False)
    _starting: asyncio.Task[None] | None = field(default=None, repr=False)

    async def attempt(self, call: Callable[[], Awaitable[T]]) -> T:
        """``call()``, one attempt of the agent call; a held try starts its progress once the
        attempt has gone on ``after`` seconds (one refused before shows nothing)."""
        if self.held and self._starting is None:
            self._timer = asyncio.get_running_loop().call_later(self.after, self.reached)
        try:
            return await call()
        finally:
            self._disarm()

    async def on_event(self, event: RunEvent) -> None:
        """The run's event for its live message; the first one: the agent took the run."""
        if self.held and self._starting is None:
            self.reached()
            if self._starting is not None:
                with contextlib.suppress(Exception):  # a failed show was logged; the run goes on
                    await asyncio.shield(self._starting)
        if self.live is not None:
            await self.live.on_event(event)

    def reached(self) -> None:
        """The agent took the run: start its progress (once)."""
        self._disarm()
        if self.held and self._starting is None:
            self._starting = asyncio.get_running_loop().create_task(self.start())

    async def start(self) -> None:
        """Start the live message, or else the "working…" indicator."""
        if self.live is not None:
            await self.live.start()
        elif self.working is not None:
            await self.working.start()

    def _disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    async def settle(self) -> None:
        """The agent call is over: nothing starts any more; a start on its way is waited for, however
        long the platform takes to show it (one call, bounded by its client's timeouts and the
        retry policy): what it showed is then cleared or finished, as a run's progress is (a
        message shown after it was finished would stay "Working…" for good)."""
        self._disarm()
        self.held = False
        if self._starting is not None:
            with contextlib.suppress(Exception):  # a failed show was logged; nothing to clear
                await asyncio.shield(self._starting)


class ShowsProgress:
    """Shows a run under way, and closes its live message (mixed into ``AgentRun``)."""

    config: GatewayConfig
    store: Store
    outbox: Outbox
    stops: RunStops  # the runs ``/cancel`` may stop (``flow.stops``)

    async def _show_progress(
        self, conv: Conversation, locale: Locale, job: Job, sender: Sender
    ) -> RunProgress:
        """Start the run's live message, or else its "working…" indicator; a try after a hand-back
        for the agent away is held instead, to start once it reaches the agent (``RunProgress``)."""
        after = self.config.progress_after_seconds
        held = await handed_back_before(self.store, job)
        shown_after = 0.0 if held else after  # held: started once due, so shown at once then
        live = await self._live_reply(conv, locale, job, sender, shown_after)
        working = None if live is not None else WorkingIndicator(self.outbox, conv, locale, after=shown_after)
        progress = RunProgress(live, working, held=held, after=max(after, REACHED_AFTER))
        if not held:
            await progress.start()
        return progress

    # --- the live message of a run (gateway/flow/live.py) ------------------------------------

    async def _live_reply(
        self, conv: Conversation, locale: Locale, job: Job, sender: Sender, after: float
    ) -> LiveReply | None:
        """The run's live message where the platform shows one and streaming is on, else None.

        A job delivered before (a crash, a hand-over) continues the live message its earlier
        attempt started, so that message is finished rather than left half-written.
        """
        if not self.config.streams_on(conv.platform):
            return None
        try:
            adapter = self.outbox.adapter_for(conv.platform)
        except LookupError:
            return None
        mode = adapter.live_mode(conv)
        if mode is None:
            return None
        key = live_key(job.inbound_id)
        adopted = None
        if job.deliveries > 1:
            with contextlib.suppress(Exception):  # unreadable: a new live message instead
                found = await self.store.get_json(key)
                adopted = MessageRef.model_validate(found) if found else None
        keep_for = int(self.config.run_timeout_seconds * 2 + 3600)

        async def remember(ref: MessageRef) -> None:
            await self.store.set_json(key, ref.model_dump(mode="json"), keep_for)

        return LiveReply(
            adapter,
            conv,
            locale,
            mode=mode,
            working_after=after,
            remember=remember,
            adopted=adopted,
            recipient=sender,
            on_stopped=lambda: self.stops.stop_own(conv.thread_key, sender),  # Slack's Stop
        )

    async def end_left_live(self, conv: Conversation, job: Job) -> None:
        """Close the live message an earlier attempt of a job given up left (nothing half-written
        stays behind a job that never replies)."""
        with contextlib.suppress(Exception):
            found = await self.store.get_json(live_key(job.inbound_id))
            if found:
                await self.drop_live(conv, LiveResult(MessageRef.model_validate(found), "", False), job)

    async def drop_live(self, conv: Conversation, result: LiveResult, job: Job) -> None:
        """Close a live message whose run is put off (the agent is away): no stale progress stays."""
        if result.ref is None:
            return
        await self.outbox.send_quietly(conv, LiveEnd(ref=result.ref))
        with contextlib.suppress(Exception):
            await self.store.delete(live_key(job.inbound_id))
