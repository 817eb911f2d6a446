"""The updating task of a run's live message (``clarigate.gateway.flow.live.LiveReply``): the
first update once the run has gone on ``FIRST_SHOW_AFTER`` seconds with something to show, then
at most one per ``live_interval``, coalescing what came meanwhile; news the platform's shared
budget skipped (``LiveSkipped``) tried again at the slot the adapter names, and the person's Stop
(``LiveStopped``) ending the updates.

``LiveUpdates`` is a part of ``LiveReply``, which it is mixed into.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.boundary.outbound_items import LiveView
from clarigate.gateway.boundary.port import LiveSkipped, LiveStopped, PlatformAdapter
from clarigate.gateway.flow.notices import notice
from clarigate.gateway.runtime import metrics

log = logging.getLogger("clarigate.gateway.flow.live")  # the live message's lines keep the name logs know


#: Seconds a run must have gone on, with something to show, before its live message is made:
#: quicker runs are posted whole (no message flashing by, no extra calls).
FIRST_SHOW_AFTER = 0.15
#: Seconds between two updates (or two tries of a skipped one) at the least.
LEAST_WAIT = 0.05


class LiveUpdates:
    """Keeps a run's live message up to date (mixed into ``LiveReply``, which sets all this)."""

    adapter: PlatformAdapter
    conversation: Conversation
    locale: Locale
    mode: str
    recipient: Sender | None
    on_stopped: Callable[[], object] | None
    working_after: float
    remember: Callable[[MessageRef], Awaitable[None]] | None
    ref: MessageRef | None
    _shown: str | None
    _text: str
    _status: str | None
    _failed_steps: set[str]
    _asking: bool
    _failed: bool
    _stopped: bool
    _closing: bool
    _wake: asyncio.Event
    _idle: bool
    _showed_working: bool
    _text_at: float
    _status_at: float
    _retry_at: float | None
    _skipped_at: float | None
    calls: int

    # --- the updating task ----------------------------------------------------------------------

    def _view(self) -> LiveView:
        return LiveView(
            mode=self.mode,
            text=self._text,
            shown=self._shown,
            status=self._status,
            locale=self.locale,
            recipient=self.recipient,
            failed=frozenset(self._failed_steps),
        )

    def _interval(self) -> float:
        """The adapter's interval, read before each pause: it may grow with the platform's load
        (Slack's stream calls are limited per workspace, shared by every run there)."""
        return max(self.adapter.live_interval(self.conversation, self.mode), LEAST_WAIT)

    async def _sleep(self, seconds: float | None) -> None:
        """Wait up to ``seconds`` (None: until woken) or until something changes: a step, the run's
        end, news (``on_event``); with None, any more text too."""
        self._wake.clear()
        self._idle = seconds is None
        try:
            async with asyncio.timeout(seconds):  # no task per wait, as ``wait_for`` makes
                await self._wake.wait()
        except TimeoutError:
            pass
        finally:
            self._idle = False

    async def _keep_up(self, shown: LiveView | None) -> None:
        if shown is not None:  # "Working…" is up already (``start``)
            await self._pause(time.monotonic())
            await self._follow(shown)
            return
        started = time.monotonic()
        working = notice("working_status", self.locale)
        # the first update: "Working…" once the run outlasts ``working_after`` (0: at once), or the
        # answer or a tool step once the run has gone on FIRST_SHOW_AFTER
        while not self._closing:
            elapsed = time.monotonic() - started
            if not (self._text or self._status) and elapsed >= self.working_after:
                self._status = working
            if self._status == working and not self._text:
                break
            if self._text or self._status:
                # a moment into the run, and the text or step itself a moment old
                since = self._text_at if self._text else self._status_at
                wait = max(FIRST_SHOW_AFTER - elapsed, since + FIRST_SHOW_AFTER - time.monotonic())
                if wait <= 0:
                    break
            else:
                wait = self.working_after - elapsed
            await self._sleep(wait)
        await self._follow(None)

    async def _follow(self, last: LiveView | None) -> None:
        """Keep the message up to date until the run ends (``last``: what it shows now)."""
        while not self._closing and not self._asking:
            view = self._view()
            if view != last and (view.text or view.status):
                hold = self._news_hold()
                if hold > 0:  # news (the first words, the first step) waits until it is a moment old
                    await self._sleep(hold)
                    continue
                if not await self._show(view):
                    return
                at = time.monotonic()
                if self._skipped_at is not None:  # a later update skipped: again if nothing comes
                    last = await self._after_skip(view, self._skipped_at - at)
                    if last is None:
                        continue
                else:  # what was shown (``shown`` moved on); nothing when the news was skipped: again soon
                    last = self._view() if self._retry_at is None else None
                await self._pause(at)
                continue
            await self._sleep(None)

    async def _after_skip(self, skipped: LiveView, retry_in: float) -> LiveView | None:
        """Wait for the slot the adapter named after a later update it skipped: None when nothing
        newer came by then (it is tried again at once), else ``skipped``, what the message still
        lacks, for the next update at its usual time to carry (no call more)."""
        await self._sleep(retry_in)  # woken early by a step or news, not by more words
        return None if self._view() == skipped else skipped

    async def _pause(self, shown_at: float) -> None:
        """Coalesce what comes for the adapter's interval after an update; the answer's first words
        (after "Working…" or a tool step) and the first step after a bare "Working…" go out sooner
        (FIRST_SHOW_AFTER): they are what the person waits for, and at most two calls per run."""
        while not self._closing and self._retry_at is None:  # (a skipped news: ``_news_hold``)
            news = self._news_at()
            if news is not None:
                remaining = max(shown_at, news) + FIRST_SHOW_AFTER - time.monotonic()
            else:
                remaining = shown_at + self._interval() - time.monotonic()
            if remaining <= 0:
                return
            await self._sleep(remaining)  # woken by news and steps, to see whether the words began

    def _news_at(self) -> float | None:
        """When the news not shown yet came (the answer's first words; the first step after a bare
        "Working…"), or None when there is none."""
        if self._text and not self._shown:
            return self._text_at
        if self._showed_working and self._status not in (None, notice("working_status", self.locale)):
            return self._status_at
        return None

    def _news_hold(self) -> float:
        """Seconds until the news is FIRST_SHOW_AFTER old (0: none, or old enough): a run that ends
        sooner is finished by its reply alone, with no update the reply repeats at once. News the
        platform's budget had no room for waits for the next slot."""
        now = time.monotonic()
        news = self._news_at()
        hold = 0.0 if news is None else news + FIRST_SHOW_AFTER - now
        if self._retry_at is not None:
            hold = max(hold, self._retry_at - now)
        return max(hold, 0.0)

    async def _show(self, view: LiveView) -> bool:
        first = self.ref is None
        news = first or self._news_at() is not None
        self._retry_at = self._skipped_at = None
        try:
            ref = await self.adapter.show_live(self.conversation, view, self.ref)
        except LiveSkipped as skip:  # no call made: the message shows what it did (``shown`` stays)
            retry_at = time.monotonic() + max(skip.retry_in, LEAST_WAIT)
            if news:  # what the person waits for: again at the next slot, not an interval on
                self._retry_at = retry_at
            else:  # a later update: its text goes with the next one, or at that slot if none comes
                self._skipped_at = retry_at
            self.calls += 1
            return True
        except LiveStopped as stop:  # the person's Stop: no more updates, and the run stops
            self.ref, self._stopped = stop.ref, True
            log.info("live %s message stopped by the person: the run stops", self.mode)
            if self.on_stopped is not None:
                self.on_stopped()
            return False
        except Exception as exc:
            self._failed = True
            code = getattr(exc, "code", None) or type(exc).__name__
            metrics.LIVE_UPDATES_FAILED.labels(platform=self.conversation.platform).inc()
            log.info("live %s message stopped updating: %s", self.mode, code)
            return False
        self.calls += 1
        metrics.LIVE_UPDATES.labels(platform=self.conversation.platform).inc()
        if ref is not None:
            # kept for a hand-over when it names a message first or anew (not for every update)
            moved = first or self.ref is None or ref.message_id != self.ref.message_id
            self.ref = ref
            if moved and self.remember is not None:
                try:
                    await self.remember(ref)
                except Exception:  # costs only the hand-over's tidy finish
                    log.warning("could not record the live message", exc_info=True)
        self._shown = view.text
        self._showed_working = not view.text and view.status == notice("working_status", self.locale)
        return True
