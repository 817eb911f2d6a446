"""Live replies on Feishu: what a streaming card (CardKit) or an edited card shows while a run goes on.

Pure functions and a small in-process ledger; the calls are in ``send.py``, the flow in
``adapter.py``. Model text is untrusted on every update: it is escaped as the final reply is
(``escape_markdown``: no ``<at …>`` ever reaches Feishu, nor a link to an unsafe scheme), status
lines included, but as typed out (a streaming card shows an update's text a part at a time: a
code span's ``<`` is the entity too, until the final reply); a link still being written at the
end is held back until it is closed, so its target is judged whole (``unfinished_link``) and what
is shown only grows.

CardKit (the ``card`` mode): a card entity (JSON 2.0, ``config.streaming_mode`` on) with one
markdown element, ``ANSWER_ELEMENT``, whose whole text is sent on each update
(``PUT /cardkit/v1/cards/:card_id/elements/:element_id/content``); Feishu types out what was
added to the old text. CardKit allows 10 operations a second on one card and, per app,
1000 a minute (50 a second) on each of its APIs; an interactive message 5 edits a second
(``PATCH /im/v1/messages/:message_id``, the ``edit`` mode) and the same 1000 a minute per app.
"""

from __future__ import annotations

import time
from typing import Any

from clarigate.agent.bounded import BoundedDict
from clarigate.agent.protocol.graphemes import boundary_after
from clarigate.gateway.boundary.messages import MessageRef
from clarigate.gateway.boundary.outbound_items import LiveView
from clarigate.gateway.flow.notices import notice

from ..code_cut import cut_in_code
from ..pacing import Budget
from .links import unfinished_link
from .markup import REPLY_CHUNK_CHARS, cut, escape_markdown, preview
from .render import PLAIN_TEXT_CHARS, Card
from .tables import tables_as_text

#: The element of a streaming card whose text grows.
ANSWER_ELEMENT = "answer"
#: A live message shows at most this much of a long answer: its latest part (the final reply
#: splits it all over cards).
LIVE_CHARS = REPLY_CHUNK_CHARS
#: Characters kept free for what ``latest`` puts before the tail ("…", a code fence).
TAIL_ROOM = 8
#: Seconds between two updates of one live message (the least: see ``interval``). A streaming
#: card once a second, as Slack's stream and Telegram's draft: Feishu types out what an update
#: added while the next is awaited, so the answer is still seen being written; each update is an
#: HTTP call (about a millisecond of CPU, most of this adapter's cost per streamed second).
CARD_INTERVAL = 1.0
EDIT_INTERVAL = 1.0
#: Live updates a second the app makes at most on each API, over all its live messages and every
#: replica and worker process (shared through the store): CardKit's and the message API's 1000 a
#: minute per app (16.7 a second), less room for posts and finishes. A message takes 5 edits a
#: second and a card 10 operations: one run's ``interval`` keeps inside those.
CALLS_PER_SECOND = 12.0
#: The two APIs live updates use, each with its own per-app budget.
CARD_API = "cardkit.element.content"
EDIT_API = "im.message.patch"


def budget() -> Budget:
    """One API's budget of live updates, for the whole app."""
    return Budget(CALLS_PER_SECOND, 1.0)


#: How a streaming card types: Feishu's defaults (70 ms a step of 1 character) are slower than
#: a model writes; at these 50 characters a second what an update adds is typed out until the
#: next one, and past that pace the next update shows the rest at once ("fast") and types on.
STREAMING_CONFIG: dict[str, Any] = {
    "print_frequency_ms": {"default": 40},
    "print_step": {"default": 2},
    "print_strategy": "fast",
}


def live_markdown(view: LiveView) -> str:
    """The card markdown of a live view: the answer so far (escaped, at most ``LIVE_CHARS``: its
    latest part past that; a link still being written held back), then the status line
    ("🔧 Searching the docs…") when there is one."""
    text = latest(view.text[: unfinished_link(view.text)]).rstrip()
    shown = "\n\n".join(part for part in (text, view.status) if part)  # escaped as one: read as one
    # tables past what a card takes shown as text: the final reply splits them over cards
    return escape_markdown(tables_as_text(shown), typed=True) or notice("working_status", view.locale)


def latest(text: str) -> str:
    """The answer so far when it fits a card; past ``LIVE_CHARS``, "…" and its latest part (from a
    line's start, inside a code block when the cut falls in one), so the card keeps moving while
    the answer grows. The final reply shows it all, from the start, split over cards."""
    if len(text) <= LIVE_CHARS:
        return text
    room = LIVE_CHARS - TAIL_ROOM
    for _ in range(3):
        shown = "…\n" + _tail(text, room)
        if len(shown) <= LIVE_CHARS:
            break
        room -= len(shown) - LIVE_CHARS  # a code block's fences took more than ``TAIL_ROOM``
    return shown


def _tail(text: str, room: int) -> str:
    """The end of ``text`` in about ``room`` characters, from a line's start when one is near;
    a code block cut there fenced again as the final cards do (``code_cut.cut_in_code``): its
    remaining lines between its own fences ("````python", with its language), whatever they hold
    ("```", a "~~~" fence), then the text after it as text."""
    start = boundary_after(text, len(text) - room)  # a character whole
    line = text.find("\n", start)
    if 0 <= line - start < LIVE_CHARS // 8:
        start = line + 1
    end = start - 1 if start and text[start - 1] == "\n" else start
    found = cut_in_code(text, end, start)
    return text[start:] if found is None else found.rest


def _summary(view: LiveView) -> str:
    """The chat list's preview of a live message (plain text, shown literally)."""
    return cut(preview(view.status or view.text or notice("working_status", view.locale)), PLAIN_TEXT_CHARS)


def streaming_card(view: LiveView, content: str) -> Card:
    """The card entity of a streaming reply: one markdown element that grows as the answer does."""
    config: dict[str, Any] = {
        "update_multi": True,
        "streaming_mode": True,
        "streaming_config": STREAMING_CONFIG,
        "summary": {"content": _summary(view)},
    }
    element = {"tag": "markdown", "element_id": ANSWER_ELEMENT, "content": content}
    return {"schema": "2.0", "config": config, "body": {"elements": [element]}}


def edited_card(view: LiveView, content: str) -> Card:
    """An ordinary card showing a live view (the ``edit`` mode: the whole card patched each time)."""
    config = {"update_multi": True, "summary": {"content": _summary(view)}}
    return {
        "schema": "2.0",
        "config": config,
        "body": {"elements": [{"tag": "markdown", "content": content}]},
    }


def interval(mode: str, active: int) -> float:
    """Seconds between updates of a live message when ``active`` others are being updated too in
    this process (the app's budget over every process is kept by the shared pace: ``budget``)."""
    least = CARD_INTERVAL if mode == "card" else EDIT_INTERVAL
    return max(least, (active + 1) / CALLS_PER_SECOND)


class LiveMessages:
    """The live messages this process is updating: what each shows, to count them and skip
    an update that would change nothing. Memory only: a replica taking a message over starts
    without it (it then sends the whole content, as ``LiveView.shown`` None asks)."""

    def __init__(self, limit: int = 1000, stale_after: float = 900.0) -> None:
        self.stale_after = stale_after
        self._shown: BoundedDict[str, tuple[str, float]] = BoundedDict(limit, refresh=True)

    def same(self, message_id: str, content: str) -> bool:
        """True when ``message_id`` already shows ``content``."""
        found = self._shown.get(message_id)
        return found is not None and found[0] == content

    def shown(self, message_id: str, content: str) -> None:
        """``message_id`` shows ``content`` now."""
        self._shown[message_id] = (content, time.monotonic())

    def done(self, message_id: str) -> None:
        """``message_id`` is finished or closed: no longer live."""
        self._shown.pop(message_id, None)

    def active(self) -> int:
        """Live messages updated within ``stale_after`` seconds (older ones are forgotten)."""
        now = time.monotonic()
        while self._shown:
            first = next(iter(self._shown.values()))
            if now - first[1] <= self.stale_after:
                break
            self._shown.popitem(last=False)
        return len(self._shown)


def streams(ref: MessageRef) -> bool:
    """True for a live message that is a CardKit streaming card (its card_id and creation time
    kept in the ref), False for an ordinary card updated by edits."""
    extra = ref.extra
    return (
        extra.get("mode") == "card" and bool(extra.get("card_id")) and extra.get("created_ms", "").isdigit()
    )
