"""Model text as the pieces of a chat stream: Markdown Slack renders, its unsafe links taken out.

A stream's ``markdown_text`` chunks are read by Slack as Markdown, so a ``[label](target)`` the
model wrote would be a live link there: one whose target has a scheme other than those of
``clarigate.adapters.markdown.SAFE_SCHEMES`` loses its target (its label stays), as the reply
shows such links as their labels only; one whose label names another host than its target
(``link_hosts.misleading_label``, as the reply judges it) shows its target as its label, as the
reply does (its target taken out instead when its label went out in an earlier piece, or when its
target is not written whole yet). Each piece is checked alone, so a piece never ends inside
a link that is still being written (``link_start``): its ``[``…``](``… goes with the next piece.
Code is left as written (``handlers[i](event)`` is no link): fenced blocks, judged on all the
text written so far, and code spans, which a piece never ends inside either.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol.graphemes import boundary_before

from ..link_hosts import misleading_label
from ..markdown import SAFE_SCHEMES, address_spans, clean, parse
from .markup import break_broadcasts, cut_escaped, escape_address

#: An unfinished link longer than this is streamed anyway (never held back for good): its target,
#: when unsafe, is taken out of its piece as far as it goes, so no later piece can complete it.
LINK_ROOM = 400
_TARGET_START = re.compile(r"\]\(\s*<?")
#: A fence: three or more backticks (with no backtick after them on the line: ```x` opens none,
#: as CommonMark reads it) or tildes, at a line's start.
_FENCE = re.compile(r"^ {0,3}(`{3,}(?=[^`\n]*$)|~{3,})", re.M)
#: A code span: backticks, then text that crosses no blank line (a line of spaces is one: it ends
#: the paragraph, and the backticks after it open nothing), then as many backticks.
_CODE_SPAN = re.compile(r"(?<!`)(`+)(?!`)(?:(?!\n[ \t]*\n).)+?(?<!`)\1(?!`)", re.S)
_BACKTICKS = re.compile(r"`+")
_FENCE_START = re.compile(r" {0,3}`{3,}")
_POINTY_END = re.compile(r"[^<>\n]*>")
#: What a backslash keeps from being Markdown in a target shown as a label (``_relabelled``).
_LABEL_PUNCTUATION = re.compile(r"([\\\[\]`*_~!])")


def code_regions(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds code: its fenced blocks (one still open runs to the end, as Markdown
    reads it) and its code spans outside them."""
    fenced = _fenced(text)
    return fenced + _spans(text, fenced)


def _fenced(text: str) -> list[tuple[int, int]]:
    """The fenced blocks of ``text`` (one still open runs to the end)."""
    regions: list[tuple[int, int]] = []
    opened: tuple[int, str] | None = None
    for match in _FENCE.finditer(text):
        fence = match.group(1)
        if opened is None:
            opened = (match.start(), fence)
        elif fence[0] == opened[1][0] and len(fence) >= len(opened[1]):
            regions.append((opened[0], match.end()))
            opened = None
    if opened is not None:
        regions.append((opened[0], len(text)))
    return regions


def _spans(text: str, fenced: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The code spans of ``text`` outside its ``fenced`` blocks."""
    return [
        match.span()
        for match in _CODE_SPAN.finditer(text)
        if not any(a <= match.start() < b for a, b in fenced)
    ]


def _opening(text: str, close: int, start: int = 0) -> int:
    """The ``[`` that the ``]`` at ``close`` closes (brackets nest), or -1 when it is not in
    ``text[start:close]``."""
    depth = 0
    for index in range(close - 1, start - 1, -1):
        if text[index] == "]":
            depth += 1
        elif text[index] == "[":
            if not depth:
                return index
            depth -= 1
    return -1


def _target_end(text: str, open_paren: int) -> int:
    """The index after the ``)`` that closes the ``(`` at ``open_paren`` (parentheses nest),
    or -1 when the text ends before it."""
    depth = 0
    for index in range(open_paren, len(text)):
        if text[index] == "(":
            depth += 1
        elif text[index] == ")":
            depth -= 1
            if not depth:
                return index + 1
    return -1


def _unsafe_link(text: str, code: list[tuple[int, int]], before: str = "") -> tuple[int, int, str] | None:
    """The first ``](target)`` of ``text`` outside ``code`` (its code regions) that must not reach
    Slack as written, as the span of ``text`` to replace and what replaces it: a target that is not
    safe taken out with the brackets around the label (a ``[`` not in ``text`` stays where it went
    out); a label naming another host than its target (``_misleading``) replaced by the target, or,
    the label gone out already or the target not written whole, the target taken out likewise.
    ``before``: the text streamed ahead of ``text`` (where a label may have begun)."""
    for match in _TARGET_START.finditer(text):
        if any(a <= match.start() < b for a, b in code):
            continue
        close = match.start()
        end = _target_end(text, close + 1)
        href = _href(text, match, end) if end != -1 else ""
        if end == -1:
            gap = re.compile(r"\s").search(text, match.end())
            end = gap.start() if gap else len(text)
        if _safe_target(text, match) and not _misleading(before + text, len(before) + close, href):
            continue
        opening = _opening(text, close)
        if opening == -1 and not _bracket_before(before + text, len(before) + close, code, len(before)):
            continue  # no "[" outside code before it, here or in what went before: no link at all
        if opening == -1:
            return close, end, ""
        shown = _relabelled(href)
        if href and _safe_target(text, match) and not misleading_label(_shown(shown), href):
            return opening + 1, close, shown
        return opening, end, text[opening + 1 : close]
    return None


def _bracket_before(text: str, at: int, code: list[tuple[int, int]], shift: int) -> bool:
    """Whether a ``[`` outside ``code`` (regions of ``text[shift:]``) stands before ``at``."""
    opening = text.rfind("[", 0, at)
    while opening != -1 and any(a <= opening - shift < b for a, b in code):
        opening = text.rfind("[", 0, opening)
    return opening != -1


def _href(text: str, match: re.Match[str], end: int) -> str:
    """The target of the link whose ``](`` (maybe ``<``) is ``match`` and that ends at ``end``,
    without its title."""
    if match.group().endswith("<"):
        closed = text.find(">", match.end(), end)
        return text[match.end() : closed] if closed != -1 else ""
    written = text[match.end() : end - 1].split()
    return written[0] if written else ""


def _misleading(text: str, close: int, href: str) -> bool:
    """Whether the link whose ``]`` is at ``close`` has a label naming another host than ``href``
    (``misleading_label`` on what the label shows); with ``href`` "" (a target not written whole
    yet), whether its label is an address at all."""
    opening = _opening(text, close)
    return opening != -1 and misleading_label(_shown(text[opening + 1 : close]), href)


def _shown(label: str) -> str:
    """What a link's label shows: its text, without the Markdown around it (emphasis, code marks,
    escapes), as the reply's renderer reads it."""
    shown = []
    for token in parse(clean(label)):
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                shown.append(" ")
            elif child.type in ("text", "code_inline", "bare_url", "image"):
                shown.append(child.content)
    return "".join(shown)


def _relabelled(href: str) -> str:
    """A link's target as its label, as the reply shows a link whose label names another host:
    Markdown in it escaped, so that it shows as written."""
    return _LABEL_PUNCTUATION.sub(r"\\\1", href)


def _safe_target(text: str, match: re.Match[str]) -> bool:
    """Whether the target ``match`` (``](``, maybe ``<``) begins has a safe scheme; one in ``<``…``>``
    only when its ``>`` is written: without it the ``<`` is the target's first character."""
    if not text[match.end() :].lower().startswith(SAFE_SCHEMES):
        return False
    return not match.group().endswith("<") or _POINTY_END.match(text, match.end()) is not None


def without_unsafe_links(text: str, before: str = "") -> str:
    """``text`` with every link outside code whose target is not safe as its label alone
    (``[label]`` without the brackets when they are in ``text``), and every one whose label names
    another host than its target with its target as its label, checked again until none is
    left: taking one out may bring a ``]`` next to a ``(``. ``before``: the text written ahead of
    ``text`` (whether ``text`` starts inside a fenced block, where a label began)."""
    while True:
        shifted = [(a - len(before), b - len(before)) for a, b in code_regions(before + text)]
        found = _unsafe_link(text, shifted, before)
        if found is None:
            return text
        start, end, put = found
        text = text[:start] + put + text[end:]


def step_title(words: str, limit: int) -> str:
    """A run's step (a tool's name, an agent's progress line: untrusted) as a task card's title or
    the edited message's step line: its links as a streamed piece's (``without_unsafe_links``),
    escaped (no broadcast word left whole), cut to ``limit`` characters."""
    return cut_escaped(without_unsafe_links(words), limit)


def stream_piece(text: str, before: str = "") -> str:
    """A piece of model text as a ``markdown_text`` chunk: unsafe links outside code as their
    labels, escaped, broadcast words broken but in addresses (``_addresses``). ``before``: the
    text streamed ahead of it (an address may have begun in its last word)."""
    words = before.split()
    tail = escape_address(words[-1]) if words and before.endswith(words[-1]) else ""
    escaped = tail + escape_address(without_unsafe_links(text, before))
    kept = [(0, len(tail)), *_addresses(escaped)]  # the tail went out with the piece before
    return break_broadcasts(escaped, kept)[len(tail) :]


def _addresses(escaped: str) -> list[tuple[int, int]]:
    """Where an escaped piece holds addresses Slack never reads a mention in: its links' targets
    and its bare ``http(s)://`` addresses outside a link's label (which is text, as in a reply)."""
    targets, labels = [], []
    for match in _TARGET_START.finditer(escaped):
        opening, end = _opening(escaped, match.start()), _target_end(escaped, match.start() + 1)
        if opening != -1 and end != -1:
            labels.append((opening, match.start()))
            href = _href(escaped, match, end)
            if href.lower().removeprefix("&lt;").startswith(SAFE_SCHEMES):
                targets.append((match.end(), match.end() + len(href)))
    bare = [(a, b) for a, b in address_spans(escaped) if not any(x <= a < y for x, y in labels)]
    return targets + bare


def link_start(text: str, start: int, end: int) -> int:
    """Where a piece ``text[start:end]`` must end so that it does not stop inside a link still
    written (``end`` itself when it does not): at the ``[`` of an unclosed ``[``…``](``… or of a
    label whose ``]`` may yet be followed by ``(`` (at the ``]`` when its ``[`` came earlier).
    Nor inside a character as shown (``graphemes``): an emoji sequence, a flag, a letter and its
    marks go whole with the next piece, as does one the text written so far ends in the middle of
    (a joiner, half a flag: the rest is still to come)."""
    before = _before_link(text, start, end)
    return boundary_before(text, before, floor=start, growing=True) if before > start else before


def _before_link(text: str, start: int, end: int) -> int:
    """``link_start`` for links and code spans alone."""
    span = _open_code_span(text, start, end)
    if span != -1:
        return span if end - span <= LINK_ROOM else end
    close = text.rfind("]", start, end)
    opening = text.rfind("[", start, end)
    if opening > close:  # a label still open: it may become a link
        return opening if end - opening <= LINK_ROOM else end
    if close == -1 or end - close > LINK_ROOM:
        return end
    after = text[close + 1 : close + 2]  # "": nothing written after the "]" yet, "(" may come
    if after not in ("(", "") or (close + 1 < end and _target_end(text[:end], close + 1) != -1):
        return end  # no link, or one this piece holds whole
    found = _opening(text, close, start)
    return found if found != -1 and end - found <= LINK_ROOM else close


def _open_code_span(text: str, start: int, end: int) -> int:
    """Where a piece ``text[start:end]`` must end so that what it reads as code cannot turn out to
    be text once more is written (-1: at ``end``): before backticks that open a code span not
    closed by ``end`` (outside fenced blocks), before a span whose closing backticks may yet grow
    (more follow them, or nothing is written after them yet: ``a`[x](…)`` then ``` `` ```), and
    before a line of backticks not ended yet, which more text may still keep from being a fence
    (```` ```[x](…)` ```` opens none)."""
    line = _unfinished_fence_line(text, start, end)
    if line != -1:
        return line
    fenced = _fenced(text[:end])
    spans = _spans(text[:end], fenced)
    regions = fenced + spans
    for match in _BACKTICKS.finditer(text, start, end):  # the first: a span's end is still to come
        if not any(a <= match.start() < b for a, b in regions):
            if _FENCE.match(text, text.rfind("\n", 0, match.start()) + 1) is None:
                return match.start()
    for a, b in spans:
        if start <= a and b == end and text[end : end + 1] in ("`", ""):
            return a
    return -1


def _unfinished_fence_line(text: str, start: int, end: int) -> int:
    """The start of the line ``text[:end]`` ends inside, when it starts with three backticks and
    is not ended in what is written (-1 otherwise, or when it began before ``start``)."""
    line = text.rfind("\n", 0, end) + 1
    if line == end or line < start or _FENCE_START.match(text, line) is None:
        return -1
    return line if text.find("\n", line) == -1 or text.find("\n", line) >= end else -1
