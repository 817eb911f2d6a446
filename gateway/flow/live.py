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
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.boundary.outbound_items import ClarificationOut, LiveEnd, LiveView, TextReply
from clarigate.gateway.boundary.port import PlatformAdapter
from clarigate.gateway.boundary.surrogates import clean
from clarigate.gateway.flow.live_updates import LiveUpdates
from clarigate.gateway.flow.notices import notice

log = logging.getLogger(__name__)

#: How long ``finish`` waits for an update still on its way.
FINISH_WAIT_SECONDS = 5.0
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


class LiveReply(LiveUpdates):
    """The live message of one run: ``start()``, feed ``on_event``, then ``await finish()``.

    Its updating task (``_keep_up`` and what it calls) is ``LiveUpdates``'s (``flow/live_updates.py``).
    """

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
