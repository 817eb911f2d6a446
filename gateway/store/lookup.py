"""What every message's thread lookup finds (``Store.thread_lookup``), and the note of a thread's
last answer it reads with it.

An answer (not a decline) is noted for its agent thread by the claim itself (``answered_key``:
the request id and the answer's time), so a typed answer to that question written while it was
still open and handled after someone else's answer is told so rather than run as a request
(``TypedAnswers.answered_first``), at no round trip of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .records import PendingRecord


def answered_key(thread_id: str) -> str:
    """The state key (``Store.get_json``) noting agent thread ``thread_id``'s last answer: JSON
    ``{"request_id": …, "at": unix seconds}``, kept ``DONE_TTL_SECONDS``."""
    return f"answered:{thread_id}"


@dataclass(frozen=True, slots=True)
class ThreadLookup:
    """A chat thread's agent thread, its open clarification, and its last answer's note."""

    thread_id: str
    pending: PendingRecord | None  # the thread's open clarification
    answered: dict[str, Any] | None = None  # ``answered_key``'s note, read when nothing is open
