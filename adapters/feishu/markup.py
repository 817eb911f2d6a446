"""Making untrusted model text safe for Feishu card markdown, and cutting it to size.

Card markdown interprets tags such as ``<at id=all></at>``, ``<at user_id="…">``,
``<font>`` and ``<link>``: model text must never ping everyone or a person, so
every ``<`` becomes the entity Feishu renders as a literal ``<``, but in code. Feishu's guide
(rich text, JSON 2.0) reads card markdown as CommonMark, where a code span or block shows what it
holds as written: no tag there, and an entity there would be shown as "&#60;". So a ``<`` that
every reading of the text (``links.code_places``) takes for code is left as written. A link or
image to a scheme other than http(s)/mailto is shown as its label alone (``links.safe_links``).

A long reply is cut between the blocks the shared parser (``clarigate.adapters.markdown``)
finds, so a code block cut in two is fenced again on both sides, as on Slack and Telegram.
"""

from __future__ import annotations

import re

from clarigate.agent.protocol.graphemes import boundary_before, shorten

from ..code_cut import (
    CodeCut,
    before_closing_run,
    cut_in_code,
    goes_on_a_paragraph,
    held_by,
    unwritten_fence,
)
from ..markdown import Block, Renderer, clean, parse
from .links import code_places, safe_links
from .tables import with_few_tables

#: Feishu renders this entity as a plain "<", so tags in model text stay text.
_LT_ENTITY = "&#60;"

_LT = re.compile("<")
#: What stands for the text before model text on its line (``inline_markdown``): a paragraph's.
_LEAD = "x "

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


def escape_markdown(text: str, typed: bool = False) -> str:
    """``text`` with every tag neutralized, so it cannot mention anyone or restyle the card, and
    every link to an unsafe scheme (``javascript:``, ``lark://``…) shown as its label alone.

    A space is put between a bare URL and CJK text it runs into, or the link would swallow it
    (CJK text that is part of the address, ``…/wiki/中文``, stays in it); in code, none.
    ``typed``: the card may show a part of the text at a time (a streaming card types out what an
    update added), and a code span is code only once its closing backtick is shown: then only a
    code block keeps its ``<`` as written.
    """
    return _escaped(clean(text), spans=not typed)


def inline_markdown(text: str) -> str:
    """``escape_markdown`` of text put after other text on its line (in ``**…**``, after a
    mention): its first line goes on a paragraph, never opens a code block."""
    return _escaped(_LEAD + clean(text), spans=True).removeprefix(_LEAD)


def clip(markdown: str, limit: int) -> str:
    """Card markdown (escaped already) cut to ``limit`` characters (``cut``): a ``<`` the cut
    leaves outside code (its span's closing backtick cut off) becomes the entity."""
    shown = cut(markdown, limit)
    if "<" not in shown or shown == markdown:
        return shown
    before, after = code_places(markdown), code_places(shown)
    return _LT.sub(lambda lt: _LT_ENTITY if before[lt.start()] > after[lt.start()] else "<", shown)


def _escaped(text: str, spans: bool) -> str:
    """``text`` (``clean``) escaped (``escape_markdown``); ``spans``: a code span is code."""
    spaced = _spaced(safe_links(text), spans)
    for _ in range(3):  # "&#60;" can make a link's target of what "<" kept from being one
        escaped = safe_links(_tags_as_text(spaced, spans))
        if escaped == spaced:  # every "<" left is code, every link safe
            return escaped
        spaced = escaped
    return escaped.replace("<", _LT_ENTITY)  # the text kept changing: no "<" left at all


def _tags_as_text(text: str, spans: bool) -> str:
    """``text`` with every ``<`` outside code as ``_LT_ENTITY`` (in code, as written)."""
    if "<" not in text:
        return text
    if "`" not in text and "~" not in text:  # no code span, no fence: no code in every reading
        return text.replace("<", _LT_ENTITY)
    code = code_places(text, spans)
    return _LT.sub(lambda lt: "<" if code[lt.start()] else _LT_ENTITY, text)


def _spaced(text: str, spans: bool) -> str:
    """``text`` with a space where CJK prose runs into a bare URL (``_space_before_prose``),
    outside code: code shows as written (``print("见https://x.cn说明")``, and the span of
    ``https://x.cn`。`` that starts where the address ends)."""
    code: bytearray | None = None

    def space(found: re.Match[str]) -> str:
        nonlocal code
        shown = _space_before_prose(found)
        if shown == found.group(0) or ("`" not in text and "~" not in text):
            return shown
        code = code_places(text, spans) if code is None else code
        return _outside(code, found.start(), shown)

    return _URL_TOKEN.sub(space, text)


def _outside(code: bytearray, start: int, shown: str) -> str:
    """``shown``, the text from ``start`` on with spaces put in (the text had none there), keeping
    only the spaces put outside code (``code_places``)."""
    kept: list[str] = []
    at = start
    for char in shown:
        if char != " ":
            kept.append(char)
            at += 1
        elif not code[at]:
            kept.append(char)
    return "".join(kept)


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
    and their indentation kept as written. After the last piece of a cut block (the text of a
    heading's rest, say), a blank line: the block after it must not go on its text. A chunk
    with more tables than a card takes is cut before one (``tables.with_few_tables``).
    """
    chunks: list[str] = []
    current, cut = "", False  # cut: ``current`` ends with the last piece of a block cut in pieces
    for block in _BLOCKS.blocks(text):
        lead = current + ("\n\n" if cut else block.separator) if current else ""
        cut = False
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
        cut = True
    chunks.append(current)
    # "\x1f" alone is a paragraph, not a card; a card holds few tables (``tables``)
    return [part for chunk in chunks if chunk.strip() for part in with_few_tables(chunk)]


def _cut_block(block: Block, limit: int, first: int) -> list[str]:
    """A block longer than ``limit`` in pieces that fit (the first in ``first``), each piece of a
    code block (fenced or indented) fenced again."""
    if not block.fence:
        return _cut_prose(block.source, limit, first)
    opening = block.opening if len(block.opening) <= limit // 10 else block.fence  # a language, not junk
    fences = len(opening) + len(block.fence) + 2
    pieces = _cut_code(block.code, max(limit - fences, 1), max(first - fences, 1)) or [""]
    return [f"{opening}\n{piece}\n{block.fence}" if piece else "" for piece in pieces]


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
    """``text`` from ``start`` on, the white space there dropped. Cut mid-line, or before a line
    going on a paragraph ("+" or "12) #" after a line of prose, ``code_cut.goes_on_a_paragraph``),
    the rest could start a line with what the text had inside one: an inline "```" (or "~~~")
    would open a code block the text did not have (``code_cut.unwritten_fence``), a "#", "-", "+",
    "*", ">" or "1." would make a heading, a list item, a quote or a rule of the next card's first
    line. Its first character is then the entity Feishu shows as that character (``_entity``), so
    the card shows the characters as written, as text. The rest of a heading is text that ends
    where the heading did: a blank line after it, or the next line could go on its paragraph."""
    rest = text[start:].lstrip()
    at = len(text) - len(rest)
    before = text[text.rfind("\n", 0, at) + 1 : at]  # the text before it on its line
    if unwritten_fence(text, rest) or (
        _opens_block(rest) and (before.strip() or goes_on_a_paragraph(text, rest))
    ):
        rest = _entity(rest[0]) + rest[1:]
    first, _, after = rest.partition("\n")
    if "#" in before and after.split("\n", 1)[0].strip() and "heading_open" in held_by(text, at):
        return f"{first}\n\n{after}"
    return rest


def _opens_block(rest: str) -> bool:
    """True when the first line of ``rest`` starts a block other than a paragraph (a code fence
    aside: ``unwritten_fence`` judges those, which the text may have opened there)."""
    tokens = parse(rest.split("\n", 1)[0])
    return bool(tokens) and tokens[0].type not in ("paragraph_open", "fence")


def _entity(char: str) -> str:
    """``char`` as the numeric entity Feishu's card Markdown guide escapes a marker with
    ("&#35;" for "#"): shown as the character, never read as a marker."""
    return f"&#{ord(char)};"


def _cut_fitting(text: str, room: int) -> tuple[int, str, CodeCut | None]:
    """Where to cut ``text`` for a piece of at most ``room`` characters (``_cut_point``), and the
    code block cut there (``cut_in_code``): cut earlier when the fence closing it would not fit."""
    fit = room
    for _ in range(3):
        at, mark = _cut_point(text, fit)
        moved = before_closing_run(text, at)  # not right after a "##" the heading would hide
        at, mark = (at, mark) if moved == at else (moved, "")
        found = cut_in_code(text, at, at + len(mark))
        if found is None or len(found.head) <= room:
            return at, mark, found
        fit = at - (len(found.head) - room)
        if fit < 1:
            break
    return at, mark, None  # no room for a fence: cut as text


#: The lines of nothing but white space a piece of code starts with.
_BLANK_LINES = re.compile(r"\A(?:[ \t]*\n)+")


def _cut_code(code: str, limit: int, first: int) -> list[str]:
    """Code in pieces of at most ``limit`` characters (the first at most ``first``), cut where
    ``_cut_point`` says; every line keeps its indentation, blank lines at a cut (white space alone
    too: a card of it would show an empty code block) are dropped."""
    pieces: list[str] = []
    room = first
    while len(code) > room:
        at, mark = _cut_point(code, room)
        pieces.append(code[:at] if code[:at].strip() else "")  # "": nothing to show, no code block
        code = _BLANK_LINES.sub("", code[at + len(mark) :])
        code = code if code.strip() else ""
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
