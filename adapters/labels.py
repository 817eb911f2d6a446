"""Option labels where a platform shows only so many characters (a button, a dropdown entry).

When every label fits, each is shown as written. When one is longer, all are numbered
(``2. …``: the number a typed reply answers with, and the one the full list beside them
shows), and a label cut short keeps what tells it apart: options that differ only past the
limit ("Yes, drop the table users and …" four times) show their beginning, an ellipsis,
then the words from where they start to differ. Pure text in, text out: each renderer
escapes or wraps the result as its platform needs. ``decline_label``: the word of the button
beside them that dismisses the question, never one an option already has.
"""

from __future__ import annotations

from collections.abc import Sequence

from clarigate.agent.protocol import HumanInputRequest, ui_text
from clarigate.agent.protocol.graphemes import boundary_before, is_boundary

ELLIPSIS = "…"
#: How far back from where two labels start to differ the shown tail may begin (to a word's start).
WORD_BACK = 15


def decline_label(request: HumanInputRequest) -> str:
    """The word of the button that dismisses ``request`` (Slack's and Telegram's): "Cancel", or
    "Skip" when an option is already called Cancel (a risk confirmation's no, an answer the agent
    reads), so that no two buttons say "Cancel" and do different things."""
    cancel = ui_text("cancel", request.locale)
    taken = any(option.label.strip().casefold() == cancel.casefold() for option in request.options)
    return ui_text("skip" if taken else "cancel", request.locale)


def labels_are_cut(labels: Sequence[str], limit: int) -> bool:
    """True when some label is longer than ``limit`` characters (so all are numbered)."""
    return any(len(label.strip()) > limit for label in labels)


def shown_labels(labels: Sequence[str], limit: int) -> list[str]:
    """The text for each label in at most ``limit`` characters (at least 10): the labels as
    written when all fit, else numbered, each cut label keeping its distinguishing part."""
    if not labels_are_cut(labels, limit):
        return list(labels)
    stripped = [label.strip() for label in labels]
    return [numbered(stripped, index, limit) for index in range(1, len(stripped) + 1)]


def numbered(labels: Sequence[str], index: int, limit: int) -> str:
    """Label ``index`` (1-based) of ``labels`` as ``"N. label"`` in at most ``limit`` characters."""
    label, number = labels[index - 1], f"{index}. "
    room = limit - len(number)
    if len(label) <= room:
        return number + label
    others = [other for i, other in enumerate(labels, 1) if i != index]
    differs = max((_common_length(label, other) for other in others), default=0)
    if differs < room - 1:  # the label's beginning, cut, already tells it apart
        return number + _head(label, room - 1) + ELLIPSIS
    head = _head(label, max(room // 3, 1))
    tail_room = room - len(head) - len(ELLIPSIS)
    differ_word = _word_start(label, min(differs, len(label) - 1))
    start = max(min(differ_word, len(label) - tail_room), len(head))  # as much as fits up to the end
    space = label.find(" ", start - 1, differ_word)
    if start > len(head) and label[start - 1] != " " and space >= 0:
        start = space + 1  # from a word's start
    while start < len(label) and not is_boundary(label, start):  # nor inside a character as shown
        start += 1
    tail = label[start:].lstrip()
    if len(tail) > tail_room:
        tail = _head(tail, max(tail_room - 1, 0)) + ELLIPSIS
    return number + head + ELLIPSIS + tail


def _head(text: str, room: int) -> str:
    """``text``'s first ``room`` characters at most, never ending inside a character as shown (an
    emoji sequence, a flag, a letter and its accent: ``graphemes``)."""
    return text[: boundary_before(text, room, floor=0)].rstrip()


def _common_length(a: str, b: str) -> int:
    """How many characters ``a`` and ``b`` share at their start."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _word_start(text: str, at: int) -> int:
    """The start of the word ``at`` is in, looking back at most ``WORD_BACK`` characters."""
    space = text.rfind(" ", max(at - WORD_BACK, 0), at + 1)
    return space + 1 if space >= 0 else at
