"""What shows a run is under way (``clarigate.gateway.flow.agent_run``): its live message where
the platform shows one and streaming is on (``flow.live``), or else a "working…" indicator
(``flow.progress``); and the live message an earlier attempt left, closed.

``ShowsProgress`` is a part of ``AgentRun``, which it is mixed into.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import LiveEnd
from clarigate.gateway.flow.live import LiveReply, LiveResult, live_key
from clarigate.gateway.flow.progress import WorkingIndicator, working_after
from clarigate.gateway.flow.stops import RunStops
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job


@dataclass
class RunProgress:
    """What shows the run is under way: its live message, or else a "working…" indicator."""

    live: LiveReply | None
    working: WorkingIndicator | None


class ShowsProgress:
    """Shows a run under way, and closes its live message (mixed into ``AgentRun``)."""

    config: GatewayConfig
    store: Store
    outbox: Outbox
    stops: RunStops  # the runs ``/cancel`` may stop (``flow.stops``)

    async def _show_progress(
        self, conv: Conversation, locale: Locale, job: Job, sender: Sender
    ) -> RunProgress:
        """Start the run's live message, or else its "working…" indicator (``working_after``)."""
        after = await working_after(self.store, job, self.config.progress_after_seconds)
        live = await self._live_reply(conv, locale, job, sender, after)
        if live is not None:
            await live.start()
            return RunProgress(live, None)
        working = WorkingIndicator(self.outbox, conv, locale, after=after)
        await working.start()
        return RunProgress(None, working)

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
