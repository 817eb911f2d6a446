"""What a run shows while it goes on: text as the model writes it, and the steps it takes.

Runners hand these to the ``on_event`` callback of ``run_turn`` as they happen (the in-process
agent from LangGraph's ``astream`` with the ``messages``, ``updates`` and ``custom`` modes, the
server runner from the run's event stream). They are for showing progress only: the turn's output
(``TurnOutput``) stays what counts, so a consumer that misses an event loses nothing but a
partial update.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TextDelta:
    """More text of the answer, as the model streamed it (untrusted model text)."""

    text: str
    message_id: str | None = None  # the AI message it belongs to (a new id: a new paragraph)


@dataclass(frozen=True)
class ToolStarted:
    """The agent called a tool (``ask_clarification`` is ``Asking`` instead)."""

    name: str
    call_id: str = ""
    description: str | None = None  # the tool's own description, when the runner knows it


@dataclass(frozen=True)
class ToolFinished:
    """A tool call came back (``ok`` False when its answer is an error)."""

    name: str
    call_id: str = ""
    ok: bool = True


@dataclass(frozen=True)
class Progress:
    """A progress line the graph wrote itself (``custom`` stream mode, ``get_stream_writer()``):
    one line of untrusted text, already cut to ``run_events.PROGRESS_CHARS``."""

    text: str


@dataclass(frozen=True)
class Asking:
    """The run is asking the person (a clarification, an approval or an interrupt): it ends here."""


RunEvent = TextDelta | ToolStarted | ToolFinished | Progress | Asking
EventSink = Callable[[RunEvent], Awaitable[None]]


async def tell(on_event: EventSink, event: RunEvent) -> None:
    """Hand ``event`` on; showing progress must never fail the run."""
    try:
        await on_event(event)
    except Exception:
        log.warning("a run event could not be shown", exc_info=True)
