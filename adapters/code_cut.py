"""A long block cut inside a code block it holds: the code closed in one piece, opened in the next.

Telegram and Feishu cut a reply as Markdown, each piece rendered alone. A list item or a quote
longer than a message is cut as text (``telegram.markup``, ``feishu.markup``); when the cut falls
inside a code block of it (fenced or indented), the piece before would leave the fence open and
the piece after would start with code lines read as text, its closing fence opening a code block
that swallows the text after it. ``cut_in_code`` closes the code in the first piece and starts the
second with the code's remaining lines fenced at the top level (``enclosing_fence``), then the
source after the code as written.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from markdown_it.token import Token

from .markdown import enclosing_fence, parse

# A list marker in the part of a line before a fence ("1. ```"): as spaces, the closing fence stays
# inside the item without starting another one.
_LIST_MARKER = re.compile(r"(?:[-+*]|[0-9]{1,9}[.)])(?=[ \t]|$)")


@dataclass(frozen=True)
class CodeCut:
    """The two sides of a cut inside a code block: ``head`` with its code closed, ``rest`` with
    the code's remaining lines fenced alone and, after them, the source after the code."""

    head: str
    rest: str


def cut_in_code(markdown: str, end: int, start: int) -> CodeCut | None:
    """``markdown`` cut into ``markdown[:end]`` and ``markdown[start:]`` (the character between
    them, a space or a line end, dropped), when that cut falls inside a code block; else None."""
    lines = markdown.split("\n")
    line = markdown.count("\n", 0, end)
    token = next((t for t in _code_tokens(markdown) if t.map and t.map[0] <= line < t.map[1]), None)
    if token is None or token.map is None:
        return None
    first, stop = token.map
    code = token.content.removesuffix("\n").split("\n") if token.content else []
    body = first + 1 if token.type == "fence" else first  # the code's first line
    closed = token.type == "fence" and stop - body > len(code)
    close = f"\n{_close_line(token, lines[first])}" if token.type == "fence" else ""
    if line == first and token.type == "fence":  # on the opening line: the code goes on whole
        head = "\n".join(lines[:first])
        head = head if head.strip() else "\n".join(lines[: first + 1]) + close
        return CodeCut(head, _rest(token, code, "\n".join(lines[stop:])))
    if line >= body + len(code):  # on the closing line
        return CodeCut("\n".join(lines[:line]) + close, "\n".join(lines[stop:]))
    after = "\n".join(lines[stop:])
    at = markdown.count("\n", 0, start)
    if at >= body + len(code):  # the cut is the code's last line end
        return CodeCut(markdown[:end] + close, after if closed else markdown[start:])
    column = start - (markdown.rfind("\n", 0, start) + 1)
    shown = code[at - body]
    margin = max(len(lines[at]) - len(shown), 0)  # what the line has before its code
    remaining = [shown[max(column - margin, 0) :], *code[at - body + 1 :]]
    return CodeCut(markdown[:end] + close, _rest(token, remaining, after))


def _code_tokens(markdown: str) -> list[Token]:
    """The code blocks of ``markdown``, at any depth."""
    return [token for token in parse(markdown) if token.type in ("fence", "code_block")]


def _close_line(token: Token, opening: str) -> str:
    """The line closing a fenced ``token`` where it stands (in a quote, inside a list item)."""
    prefix = opening[: opening.index(token.markup)]
    return _LIST_MARKER.sub(lambda marker: " " * len(marker.group()), prefix) + token.markup


def _rest(token: Token, code: list[str], after: str) -> str:
    """The code's ``code`` lines fenced at the top level, then ``after``."""
    while code and not code[0].strip():
        code = code[1:]  # blank lines at a message's edge show nothing
    if not code:
        return after
    text = "\n".join(code)
    char = token.markup[0] if token.type == "fence" else "`"
    fence = enclosing_fence(text, char, max(len(token.markup), 3))
    info = token.info.strip() if token.type == "fence" else ""
    fenced = f"{fence}{info}\n{text}\n{fence}"
    return f"{fenced}\n{after}" if after.strip() else fenced


# A run of backticks or tildes a line may open a code block with.
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def unwritten_fence(text: str, rest: str) -> str:
    """The "```" (or "~~~") ``rest``, the end of ``text`` after a cut, starts with when it opens a
    code block where ``text`` has none, else "": cut mid-line before an inline fence, the next
    piece would show an empty code block, or the text after it as code. Each platform writes the
    run as text its own way (Telegram a backslash, Feishu an entity)."""
    run = _FENCE_RUN.match(rest)
    if run is None or not _opens_code(rest, 0):
        return ""
    return "" if _opens_code(text, text.count("\n", 0, len(text) - len(rest))) else run.group(0)


def goes_on_a_paragraph(text: str, rest: str) -> bool:
    """True when ``rest``, the end of ``text`` after a cut at a line end, starts a line that goes
    on a paragraph of ``text``: its text, whatever it starts with ("+" or "2. x" after a line of
    prose, which cannot start a list item there). Alone, the line could start a list item (an empty
    one shows nothing: the "+" lost); each platform writes its first character as text then. A
    quote's line (its ">" first) is left to the quote."""
    if rest.startswith(">"):
        return False
    line = text.count("\n", 0, len(text) - len(rest))
    end = text.find("\n", len(text) - len(rest))
    tokens = parse(text[: end if end >= 0 else len(text)])
    return any(t.type == "paragraph_open" and t.map and t.map[0] < line < t.map[1] for t in tokens)


def held_by(source: str, at: int) -> set[str]:
    """The blocks of ``source`` that hold its place ``at`` (a cut's far side), by token type
    ("blockquote_open", "heading_open" for a "#" heading, "list_item_open"…): each opened on an
    earlier line, or on the line of ``at`` before it (the cut inside that line)."""
    line = source.count("\n", 0, at)
    inside = bool(source[source.rfind("\n", 0, at) + 1 : at].strip())
    end = source.find("\n", at)
    return {
        token.type
        for token in parse(source[: end if end >= 0 else len(source)])
        if token.nesting == 1
        and token.map
        and (token.map[0] < line or (inside and token.map[0] == line))
        and line < token.map[1]
        and (token.type != "heading_open" or token.markup[:1] == "#")
    }


# A run of "#" a piece ends with, after a space: the closing sequence of a heading ending there.
_CLOSING_RUN = re.compile(r"[ \t]+#+[ \t]*$")


def before_closing_run(text: str, cut: int, head: str = "") -> int:
    """``cut`` moved back before the run of "#" that the piece ``head + text[:cut]`` would end with
    when its last line is a heading that goes on after the cut: there, the run is text ("## a ## b"),
    but a heading ending with it takes it for its closing sequence and hides it. Moved before it,
    the run starts the next piece, mid-line (its first "#" written as text there)."""
    if not text[cut:].split("\n", 1)[0].strip():
        return cut  # the line ends here: its closing "#"s close it in the text too
    moved = cut
    while run := _CLOSING_RUN.search(head + text[:moved]):
        at = run.start() - len(head)
        if at <= 0 or not text[:at].strip():
            break  # nothing of the text before it
        line = (head + text).count("\n", 0, run.start())
        tokens = parse(head + text[:moved])
        heading = any(
            t.type == "heading_open" and t.markup[:1] == "#" and t.map and t.map[0] == line for t in tokens
        )
        if not heading:
            break
        moved = at
    return moved


def _opens_code(markdown: str, line: int) -> bool:
    """True when a fenced code block of ``markdown`` opens on its line ``line``."""
    return any(token.type == "fence" and token.map and token.map[0] == line for token in parse(markdown))
