"""A run shown live: the answer as the model writes it, and what the agent is doing meanwhile
(a tool it runs, or a progress line the graph wrote itself: ``agent.events.Progress``).

``LiveReply`` takes a runner's events (``clarigate.agent.events``) and keeps one live message of the
run up to date through the adapter (``PlatformAdapter.show_live``), coalescing: the first
update once the run has gone on ``FIRST_SHOW_AFTER`` seconds with something to show, then at
most one per ``live_interval`` (the platform's limits), whatever the number of tokens. A run
that is over sooner is not shown live at all: its reply is posted whole, as before. An update the
platform's shared budget had no room for (``LiveSkipped``) waits for the next update, unless it
was the news (the message itself, the answer's first words, the first step after "Working…"):
that is tried again at the next slot the adapter names, not an interval later. A later update
skipped is tried again at that slot too when nothing newer has come by then (a tool's step, with
the run silent while the tool works); else the next update carries it, with no call more.

The live message is only a view. What the person finally reads is the run's recorded reply,
which finishes that message (``TextReply.live``) or closes it (``LiveEnd``) through the core's
delivery step, retried like any reply. The message's reference is kept in the store as soon as
it exists, so a replica that takes the job over (a crash, a hand-over) finishes the same
message instead of leaving a half-written one behind. A message the person stopped on the
platform (Slack's Stop: ``LiveStopped``) takes no more updates, and the run stops (``on_stopped``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from clarigate.agent.events import Asking, Progress, RunEvent, TextDelta, ToolFinished, ToolStarted
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import (
    ClarificationOut,
    Conversation,
    LiveEnd,
    LiveView,
    MessageRef,
    Sender,
    TextReply,
)
from clarigate.gateway.boundary.port import LiveSkipped, LiveStopped, PlatformAdapter
from clarigate.gateway.boundary.surrogates import clean
from clarigate.gateway.flow.notices import notice
from clarigate.gateway.runtime import metrics

log = logging.getLogger(__name__)

#: Seconds a run must have gone on, with something to show, before its live message is made:
#: quicker runs are posted whole (no message flashing by, no extra calls).
FIRST_SHOW_AFTER = 0.15
#: How long ``finish`` waits for an update still on its way.
FINISH_WAIT_SECONDS = 5.0
#: Seconds between two updates (or two tries of a skipped one) at the least.
LEAST_WAIT = 0.05
#: A tool's description is its progress line when its first sentence is at most this long.
MAX_DESCRIPTION = 60


def tool_line(event: ToolStarted, locale: Locale) -> str:
    """ "🔧 Searching the docs…": the tool's short description, else its name."""
    first = (event.description or "").strip().split("\n")[0].split(". ")[0].strip().rstrip(".…")
    what = first if 0 < len(first) <= MAX_DESCRIPTION else notice("using_tool", locale, tool=event.name)
    return notice("tool_running", locale, what=what)


def live_key(inbound_id: str) -> str:
    """The store key of the live message a job's run started (for the replica that takes it over)."""
    return f"live:{inbound_id}"


@dataclass(frozen=True)
class LiveResult:
    """What a run's live message showed, for the reply that finishes it."""

    ref: MessageRef | None  # None: nothing was shown live
    text: str  # the answer text streamed (untrusted), possibly empty
    failed: bool  # an update failed: the message may show less than ``text``
    stopped: bool = False  # the person stopped it on the platform (``LiveStopped``): it takes nothing more


class LiveReply:
    """The live message of one run: ``start()``, feed ``on_event``, then ``await finish()``."""

    def __init__(
        self,
        adapter: PlatformAdapter,
        conversation: Conversation,
        locale: Locale,
        *,
        mode: str,
        working_after: float,
        remember: Callable[[MessageRef], Awaitable[None]] | None = None,
        adopted: MessageRef | None = None,
        recipient: Sender | None = None,
        on_stopped: Callable[[], object] | None = None,
    ) -> None:
        self.adapter = adapter
        self.conversation = conversation
        self.locale = locale
        self.mode = mode
        self.recipient = recipient
        self.on_stopped = on_stopped  # the person stopped the message (``LiveStopped``): the run stops
        self.working_after = working_after
        self.remember = remember
        # a message another replica started for this job: this run continues it (whole-content
        # updates, since what it shows is not known here)
        self.ref: MessageRef | None = adopted
        self._shown: str | None = None if adopted is not None else ""
        self._text = ""
        self._half = ""  # the first half of a UTF-16 pair ending the last piece, until the next one
        self._message_id: str | None = None
        self._status: str | None = None
        self._steps: dict[str, str] = {}  # a tool call's id -> its status line
        self._failed_steps: set[str] = set()  # the status lines of steps whose tool came back with an error
        self._asking = False
        self._failed = False
        self._stopped = False
        self._closing = False
        self._wake = asyncio.Event()
        self._idle = False  # the updating task waits for anything new (not for a moment to pass)
        self._closed = asyncio.Event()
        self._showed_working = False  # the last update showed "Working…" alone
        self._text_at = self._status_at = 0.0  # when the answer began, when the step last changed
        self._retry_at: float | None = None  # when the news the budget had no room for is tried again
        self._skipped_at: float | None = None  # when a later update skipped is tried again, if nothing came
        self._task: asyncio.Task[None] | None = None
        self.calls = 0  # show_live calls made (for logs and tests)

    async def start(self) -> None:
        """Begin watching the run: the first update comes once there is something worth showing;
        with ``working_after`` 0, "Working…" is shown before this returns (every run shows it)."""
        shown: LiveView | None = None
        if self.working_after <= 0:
            self._status = notice("working_status", self.locale)
            if await self._show(self._view()) and self._retry_at is None:
                shown = self._view()
        self._task = asyncio.get_running_loop().create_task(self._keep_up(shown))

    async def on_event(self, event: RunEvent) -> None:
        """A runner's event (``clarigate.agent.events``); returns at once, updates follow on their own.

        Called for every token: a piece of text wakes the updating task only when it is news (the
        answer's first words, the text after a step) or when that task waits for anything new;
        between two updates the pieces just gather (the next update shows them all)."""
        if isinstance(event, TextDelta):
            piece = self._whole(event.text)
            if not piece:
                return
            news = not self._text or self._status is not None
            if self._text and event.message_id and event.message_id != self._message_id:
                self._text = self._text.rstrip() + "\n\n"  # a new message of the run: a new paragraph
            self._message_id = event.message_id or self._message_id
            if not self._text:
                self._text_at = time.monotonic()
            self._text += piece if self._text else piece.lstrip()
            self._status = None
            if news or self._idle:
                self._wake.set()
            return
        if isinstance(event, ToolStarted):
            self._status = self._steps[event.call_id] = clean(tool_line(event, self.locale))
            self._status_at = time.monotonic()
        elif isinstance(event, Progress):  # the graph's own line (untrusted: escaped by the adapter)
            self._status = notice("progress_line", self.locale, what=clean(event.text))
            self._status_at = time.monotonic()
        elif isinstance(event, ToolFinished):
            line = self._steps.pop(event.call_id, None)
            if line is not None and event.ok:  # a step is marked as its tool's last call went
                self._failed_steps.discard(line)
            elif line is not None:
                self._failed_steps.add(line)
            self._status = None if self._text else notice("working_status", self.locale)
        elif isinstance(event, Asking):
            self._asking = True  # a question follows as native controls: nothing more to stream
            self._status = None
        self._wake.set()

    async def finish(self) -> LiveResult:
        """Stop updating (an update on its way is waited for); what the message shows now."""
        self._closing = True
        self._closed.set()
        self._wake.set()
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._task), FINISH_WAIT_SECONDS)
            if not self._task.done():
                self._task.cancel()
        if self.ref is not None:
            try:
                await self.adapter.live_over(self.conversation, self.ref)
            except Exception:
                log.warning("the %s adapter failed ending a live message's updates", self.mode, exc_info=True)
        text = (self._text + clean(self._half)).strip()
        return LiveResult(ref=self.ref, text=text, failed=self._failed, stopped=self._stopped)

    def _whole(self, piece: str) -> str:
        """``piece`` of the answer as it may be shown: no platform takes half a UTF-16 pair, which a
        model may stream (an emoji one half a piece, or ``"\\ud83d"`` alone). A first half ending
        the piece waits for the next one, to make the character with its second half; any other
        lone half is U+FFFD, as in the reply (``surrogates.clean``). The text only grows by such
        pieces: what an update showed is where the next goes on from (Slack's stream appends)."""
        piece, self._half = self._half + piece, ""
        if "\ud800" <= piece[-1:] <= "\udbff":
            piece, self._half = piece[:-1], piece[-1]
        return str(clean(piece))

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


def finish_items(result: LiveResult, items: list[Any], first: int, above: str | None = None) -> None:
    """Make a run's first item (at ``first`` in ``items``) finish its live message: the first
    reply becomes that message; before a question or an error, the streamed text is ended as it
    stands, or the message (only progress shown) is closed. A reply the run's question follows
    says so (``TextReply.question_follows``) when it goes on from what was streamed.

    ``above``: the turn's text shown right above its question (``TurnOutput.shown_above``), never
    streamed: the streamed text (the model's words before it asked) keeps the live message, and
    that text and the question follow as messages of their own."""
    if result.ref is None:
        return
    head = items[first] if len(items) > first else None
    if isinstance(head, TextReply) and head.private_to is None and not (above and head.text == above):
        # a stream (Slack's) left open for the question goes on from what it showed: only when
        # the reply goes on from the streamed text too
        asks = len(items) > first + 1 and isinstance(items[first + 1], ClarificationOut)
        asks = asks and clean(head.text).startswith(result.text)  # (as streamed: no half of a pair)
        items[first] = head.model_copy(update={"live": result.ref, "question_follows": asks})
    elif result.text:
        asks = isinstance(head, ClarificationOut)
        streamed = TextReply(text=result.text, live=result.ref, question_follows=asks, from_agent=True)
        items.insert(first, streamed)
    else:
        items.insert(first, LiveEnd(ref=result.ref))
