"""Few enough Markdown tables in one card for Feishu to take it.

Feishu makes each GFM table of a card's markdown a table component, and refuses a card with
more than it allows (230099, "ErrCode: 11310; ErrMsg: card table number over limit"): at most
five table components a card (its table component guide), at most four tables a markdown
component (the guide to card markdown of Lark's CLI); Lark's own agent plugin keeps to three.
So a reply part holding more is cut before a table, a card's worth of tables at a time; tables a
cut cannot part (nested in a list or a quote) past the limit are shown as text: a zero-width
space in their delimiter row (``|---|``), so no reading takes them for a table.

Which lines are tables is what markdown-it finds with GFM tables on, with and without indented
code blocks (Feishu documents fenced code only); the larger count is the one judged.
"""

from __future__ import annotations

from markdown_it import MarkdownIt
from markdown_it.token import Token

from ..markdown import clean

#: The tables one card's markdown may hold (under both documented limits).
MAX_TABLES = 3
#: Every table past the limit is broken in each round; a text needing more rounds than this
#: loses the delimiter rows of every table it has.
_ROUNDS = 20


def _reading(indented_code: bool) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
    if not indented_code:
        md.disable("code")
    return md


_READINGS = (_reading(indented_code=False), _reading(indented_code=True))


def _tables(text: str, reading: MarkdownIt) -> list[Token]:
    return [token for token in reading.parse(text) if token.type == "table_open" and token.map]


def table_count(text: str) -> int:
    """The tables a card's markdown ``text`` holds, in the reading finding most."""
    if "|" not in text:
        return 0
    return max(len(_tables(clean(text), reading)) for reading in _READINGS)


def with_few_tables(chunk: str) -> list[str]:
    """``chunk`` (a part of a reply) as one or more parts of at most ``MAX_TABLES`` tables each:
    cut before a table (on a line of its own) while one can be, tables past the limit in a part
    that cannot be cut shown as text (``tables_as_text``). Each part is at most as long as the
    chunk, but for the zero-width spaces of tables shown as text."""
    chunk = clean(chunk)
    parts: list[str] = []
    while table_count(chunk) > MAX_TABLES:
        lines = chunk.split("\n")
        cut = _cut_line(chunk)
        if cut is None:
            break
        head = "\n".join(lines[:cut]).rstrip()
        chunk = "\n".join(lines[cut:])
        if head.strip():
            parts.append(tables_as_text(head))
    parts.append(tables_as_text(chunk))
    return [part for part in parts if part.strip()]


def _cut_line(text: str) -> int | None:
    """The line starting the first top-level table past the first ``MAX_TABLES`` (in the
    reading without indented code), None when there is none (a line after the first)."""
    tables = _tables(text, _READINGS[0])
    for token in tables[MAX_TABLES:]:
        if token.level == 0 and token.map and token.map[0] > 0:
            return token.map[0]
    return None


def tables_as_text(text: str) -> str:
    """``text`` with every table past the first ``MAX_TABLES`` (in any reading) shown as text."""
    for _ in range(_ROUNDS):
        if table_count(text) <= MAX_TABLES:
            return text
        lines = clean(text).split("\n")
        for reading in _READINGS:
            for token in _tables("\n".join(lines), reading)[MAX_TABLES:]:
                _break_delimiter(lines, token.map[0] + 1 if token.map else -1)
        text = "\n".join(lines)
    lines = text.split("\n")
    for row, line in enumerate(lines):
        if "|" in line and not line.strip(" \t|:->"):  # any line a delimiter row could be
            _break_delimiter(lines, row)
    return "\n".join(lines)


def _break_delimiter(lines: list[str], row: int) -> None:
    """The delimiter row ``lines[row]`` made no delimiter row: a zero-width space before its first
    "-" (a cell of ":" and a zero-width space before "---" is text)."""
    if 0 <= row < len(lines) and "-" in lines[row]:
        at = lines[row].index("-")
        lines[row] = lines[row][:at] + "\u200b" + lines[row][at:]
