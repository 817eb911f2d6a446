"""Where text may be cut without splitting a character as a person sees it (a grapheme cluster).

A reply split into messages, a line cut to a platform's limit, or a question, label or approval
line cut to the protocol's (``coerce.cut``) is cut between code points. Where no space is near
(Chinese text, a run of emoji) that cut can fall inside a sequence shown as one character: an emoji
and its skin tone (U+1F3FB–1F3FF), emoji joined by U+200D (a family), a symbol and its variation
selector (U+FE0F, U+FE0E) or keycap (U+20E3), the two regional indicators of a flag, a letter and
its combining marks. Either half then shows as something else: a yellow hand and a lone colour
swatch, three people instead of a family, two letters instead of a flag.

``boundary_before`` moves such a cut back to where that character starts. The characters are the
extended grapheme clusters of Unicode (UAX #29) as the ``regex`` library finds them (``\\X``), read
from a little before the cut (``MAX_CLUSTER``; from the start of a run of regional indicators, whose
pairs are counted from there). Text still being written (a Slack stream's) is not cut at its end
when it ends with a joiner or half a flag: the rest of that character is still to come.
"""

from __future__ import annotations

import regex

ZWJ = "\u200d"
#: How far back a cut is moved at most: a "character" longer than this (a stack of combining marks
#: no script needs) is cut where it stands, as any text longer than the room must be.
MAX_CLUSTER = 32
_CLUSTER = regex.compile(r"\X")


def _regional(char: str) -> bool:
    return 0x1F1E6 <= ord(char) <= 0x1F1FF


def _run_start(text: str, index: int) -> int:
    """Where the regional indicators just before ``index`` begin (``index`` when there are none)."""
    while index > 0 and _regional(text[index - 1]):
        index -= 1
    return index


def _waits_for_more(text: str) -> bool:
    """True when ``text`` ends inside a character still being written: a joiner, half a flag."""
    return text.endswith(ZWJ) or (len(text) - _run_start(text, len(text))) % 2 == 1


def _ends(text: str, start: int, stop: int) -> list[int]:
    """Where the characters of ``text`` read from ``start`` end, up to the first at or past ``stop``."""
    ends = []
    for cluster in _CLUSTER.finditer(text, _run_start(text, start), len(text)):
        ends.append(cluster.end())
        if cluster.end() >= stop:
            break
    return ends


def is_boundary(text: str, index: int, growing: bool = False) -> bool:
    """True when ``text`` may be cut at ``index``: not inside a character as shown. Its ends always
    may, unless ``growing`` (text still being written, a stream's): its end then may not when what
    it ends with waits for more (a joiner, half a flag)."""
    if index <= 0:
        return True
    if index >= len(text):
        return not growing or not _waits_for_more(text)
    return index in _ends(text, max(index - MAX_CLUSTER, 0), index)


def boundary_before(text: str, index: int, floor: int = 1, growing: bool = False) -> int:
    """The last place at or before ``index`` where ``text`` may be cut (``is_boundary``), no lower
    than ``floor`` (1: a piece keeps at least one code point, so cutting goes on); ``index`` itself
    when there is none (one character longer than the room is cut, as it must be)."""
    if index <= 0 or (index >= len(text) and is_boundary(text, index, growing)):
        return index
    start = max(index - MAX_CLUSTER, 0)
    lowest = max(floor, start)
    ends = ([0] if start == 0 else []) + _ends(text, start, index)  # ``start`` may be inside one
    if index >= len(text):  # a growing text's end that waits for more: the character before it
        ends = [end for end in ends if end < len(text)]
    fits = [end for end in ends if lowest <= end <= index]
    return fits[-1] if fits else index


def boundary_after(text: str, index: int) -> int:
    """The first place at or after ``index`` where ``text`` may be cut (``is_boundary``): where
    text kept from ``index`` on may start, never inside a character as shown."""
    if is_boundary(text, index):
        return index
    for cluster in _CLUSTER.finditer(text, boundary_before(text, index, floor=0)):
        if cluster.end() > index:
            return cluster.end()
    return len(text)


def shorten(text: str, limit: int, *, strip: bool = False) -> str:
    """``text`` when it fits in ``limit`` code points, else cut to ``limit - 1`` and ending in
    ``…``, never inside a character as shown (``strip``: without the spaces before the ``…``)."""
    if len(text) <= limit:
        return text
    head = text[: boundary_before(text, max(limit - 1, 0), floor=0)]
    return (head.rstrip() if strip else head) + "…"
