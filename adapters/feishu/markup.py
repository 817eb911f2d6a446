"""Making untrusted model text safe for Feishu card markdown, and cutting it to size.

Card markdown interprets tags such as ``<at id=all></at>``, ``<at user_id="…">``,
``<font>`` and ``<link>``: model text must never ping everyone or a person, so
every ``<`` becomes the entity Feishu renders as a literal ``<``. A link or image to a scheme
other than http(s)/mailto is shown as its label alone (``links.safe_links``).

A long reply is cut between the blocks the shared parser (``clarigate.adapters.markdown``)
finds, so a code block cut in two is fenced again on both sides, as on Slack and Telegram.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol.graphemes import boundary_before, shorten

from ..code_cut import CodeCut, cut_in_code, unwritten_fence
from ..markdown import Block, Renderer
from .links import safe_links

#: Feishu renders this entity as a plain "<", so tags in model text stay text.
_LT_ENTITY = "&#60;"

#: The first character of a fence run (``code_cut.unwritten_fence``) as the entity Feishu shows as
#: that character (its card Markdown guide's table of escapes), so the run is text and opens nothing.
_FENCE_ENTITY = {"`": "&#96;", "~": "&#126;"}

#: Replies are split into cards of at most this many characters (cards allow ~30 KB;
#: CJK text is 3 bytes a character, JSON escaping adds a little).
REPLY_CHUNK_CHARS = 4000

#: A bare URL and what is glued to it, up to the first space: CJK text in it may be part of the
#: address (``https://zh.wikipedia.org/wiki/中文``) or the sentence it runs into.
_URL_TOKEN = re.compile(r"https?://[^\s<>]+")
#: CJK punctuation (。，、「」…) ends an address wherever it stands.
_CJK_PUNCT = "[\u3000-\u303f\uff00-\uffef]"
_CJK_RUN = re.compile(rf"{_CJK_PUNCT}|[\u2e80-\u2fff\u3040-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
#: After these, CJK text starts a path segment, a query value, a fragment: part of the address.
_OPENS_PART = "/=?#&_-(+~"
#: CJK text followed by these continues the address (``…/中文/历史``, ``…?q=中文&x=1``, ``中文.html``).
_CONTINUES = re.compile(r"[/?#&=]|\.\w")


def escape_markdown(text: str) -> str:
    """``text`` with every tag neutralized, so it cannot mention anyone or restyle the card, and
    every link to an unsafe scheme (``javascript:``, ``lark://``…) shown as its label alone.

    A space is put between a bare URL and CJK text it runs into, or the link would swallow it
    (CJK text that is part of the address, ``…/wiki/中文``, stays in it).
    """
    escaped = _URL_TOKEN.sub(_space_before_prose, safe_links(text)).replace("<", _LT_ENTITY)
    return safe_links(escaped)  # "&#60;" can make a link's target of what "<" kept from being one


def _space_before_prose(found: re.Match[str]) -> str:
    """A bare URL with a space put where CJK prose runs into it (Feishu's card FAQ: the link would
    swallow the text); CJK text that is part of the address stays in it."""
    url = found.group(0)
    for run in _CJK_RUN.finditer(url):
        start, end = run.span()
        if re.fullmatch(_CJK_PUNCT, run.group()) or not (
            url[start - 1] in _OPENS_PART or _CONTINUES.match(url, end)
        ):
            return f"{url[:start]} {_URL_TOKEN.sub(_space_before_prose, url[start:])}"  # and any URL after
    return url


def preview(text: str) -> str:
    """``text`` for a card's ``summary`` (the chat list's one-line preview, plain text): on one
    line, and no ``<`` left that could read as a tag (it becomes the look-alike ``‹``)."""
    return " ".join(text.split()).replace("<", "\u2039")


def cut(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters, with an ellipsis when something was cut (never
    inside a character as shown: an emoji sequence, a flag, a letter and its marks; ``graphemes``)."""
    return shorten(text, limit)


class _ReplyBlocks(Renderer):
    """Where a reply's blocks start and end: a card shows Markdown as written, so a piece of a
    reply is its source, and the hooks (whose rendering is not used) return what they are given."""

    def text(self, text: str, within: tuple[str, ...]) -> str:
        """The text as written."""
        return text

    def code(self, code: str, within: tuple[str, ...]) -> str:
        """The code as written."""
        return code

    def code_block(self, code: str, language: str, within: tuple[str, ...]) -> str:
        """The code as written."""
        return code

    def link(self, href: str, inner: str, label: str, within: tuple[str, ...]) -> str:
        """The label."""
        return inner

    def strong(self, inner: str, within: tuple[str, ...]) -> str:
        """The inner text."""
        return inner

    def emphasis(self, inner: str, within: tuple[str, ...]) -> str:
        """The inner text."""
        return inner

    def strike(self, inner: str, within: tuple[str, ...]) -> str:
        """The inner text."""
        return inner

    def quote(self, inner: str, within: tuple[str, ...]) -> str:
        """The inner text."""
        return inner


_BLOCKS = _ReplyBlocks()


def split_reply(text: str, limit: int = REPLY_CHUNK_CHARS) -> list[str]:
    """Split a long reply into chunks of at most ``limit`` characters, between blocks when possible.

    Blocks (paragraphs, lists, code blocks…) are packed as they come, a blank line at most between
    two. A block longer than a card is cut (its first piece filling the room the chunk before it
    has left) at a blank line, else a line end, else a space; a code block cut in two is closed at
    the end of one chunk and opened again, with its language, at the start of the next, its lines
    and their indentation kept as written.
    """
    chunks: list[str] = []
    current = ""
    for block in _BLOCKS.blocks(text):
        lead = f"{current}{block.separator}" if current else ""
        if len(lead) + len(block.source) <= limit:
            current = lead + block.source
            continue
        if current and (len(block.source) <= limit or limit - len(lead) < limit // 4):
            chunks.append(current)  # the block starts a chunk of its own
            current, lead = "", ""
        if len(block.source) <= limit:
            current = block.source
            continue
        pieces = _cut_block(block, limit, first=limit - len(lead))
        pieces[0] = lead + pieces[0]
        *done, current = pieces
        chunks.extend(done)
    chunks.append(current)
    return [chunk for chunk in chunks if chunk.strip()]  # "\x1f" alone is a paragraph, not a card


def _cut_block(block: Block, limit: int, first: int) -> list[str]:
    """A block longer than ``limit`` in pieces that fit (the first in ``first``), each piece of a
    code block (fenced or indented) fenced again."""
    if not block.fence:
        return _cut_prose(block.source, limit, first)
    opening = block.opening if len(block.opening) <= limit // 10 else block.fence  # a language, not junk
    fences = len(opening) + len(block.fence) + 2
    pieces = _cut_code(block.code, max(limit - fences, 1), max(first - fences, 1)) or [""]
    return [f"{opening}\n{piece}\n{block.fence}" for piece in pieces]


def _cut_prose(text: str, limit: int, first: int) -> list[str]:
    """Text (a list, a quote…) in pieces of at most ``limit`` characters (the first at most
    ``first``), cut where ``_cut_point`` says, white space at the cut dropped (``_rest``). Cut
    inside a code block it holds, a piece closes the code and what follows is split anew, the
    code's remaining lines fenced first (``cut_in_code``): its lines are never read as text, nor
    its closing fence as an opening one."""
    pieces: list[str] = []
    room = first
    while len(text) > room:
        at, mark, found = _cut_fitting(text, room)
        if found is not None:
            return [*pieces, found.head, *split_reply(found.rest, limit)]
        pieces.append(text[:at].rstrip())
        text = _rest(text, at + len(mark))
        room = limit
    return [*pieces, text] if text else pieces


def _rest(text: str, start: int) -> str:
    """``text`` from ``start`` on, the white space there dropped. Cut mid-line before an inline
    "```" (or "~~~"), the rest would start with a fence the text did not have
    (``code_cut.unwritten_fence``): its first character is then an entity (``_FENCE_ENTITY``), so
    the card shows the characters as written."""
    rest = text[start:].lstrip()
    if not unwritten_fence(text, rest):
        return rest
    return _FENCE_ENTITY[rest[0]] + rest[1:]


def _cut_fitting(text: str, room: int) -> tuple[int, str, CodeCut | None]:
    """Where to cut ``text`` for a piece of at most ``room`` characters (``_cut_point``), and the
    code block cut there (``cut_in_code``): cut earlier when the fence closing it would not fit."""
    fit = room
    for _ in range(3):
        at, mark = _cut_point(text, fit)
        found = cut_in_code(text, at, at + len(mark))
        if found is None or len(found.head) <= room:
            return at, mark, found
        fit = at - (len(found.head) - room)
        if fit < 1:
            break
    return at, mark, None  # no room for a fence: cut as text


def _cut_code(code: str, limit: int, first: int) -> list[str]:
    """Code in pieces of at most ``limit`` characters (the first at most ``first``), cut where
    ``_cut_point`` says; every line keeps its indentation, blank lines at a cut are dropped."""
    pieces: list[str] = []
    room = first
    while len(code) > room:
        at, mark = _cut_point(code, room)
        pieces.append(code[:at])
        code = code[at + len(mark) :].lstrip("\n")
        room = limit
    return [*pieces, code] if code else pieces


def _cut_point(text: str, room: int) -> tuple[int, str]:
    """Where to cut ``text`` to fit ``room``, and what is cut at (dropped): the last blank line,
    line end or space in the second half of the room, else ``""`` at the room's end, moved back to
    where a character as shown starts (``graphemes``)."""
    for mark in ("\n\n", "\n", " ", ""):  # "": at ``room`` itself
        at = text.rfind(mark, 0, room + len(mark))
        if at > room // 2:
            break
    return (at, mark) if mark else (boundary_before(text, at), mark)
