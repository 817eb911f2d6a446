"""Links in model text that Feishu's card markdown would make clickable, kept to safe schemes.

A card's markdown element gets the Markdown the model wrote, and Feishu renders its links
(``[label](target)``; ``![alt](target)`` and reference links ``[label][ref]`` … ``[ref]: target``
where its reader takes them). As on every platform (``clarigate.adapters.markdown.SAFE_SCHEMES``),
a link or image whose target is not http(s) or mailto (``javascript:``, ``lark://``, a bare
path…) is shown as its label alone; the rest of the text stays exactly as written. An image
to an address is made a link to it (its alt text the label, else the address): Feishu's card
markdown takes an image's target for the key of an image the app uploaded and refuses the whole
card for an address (230099, "ErrCode: 200570; card contains invalid image keys").

Which brackets are links is what markdown-it (CommonMark, the shared renderer's parser) finds,
every scheme let through its link check so that none is missed, in two readings (with and without
indented code blocks: Feishu documents fenced code only). The spans a link took are found again in
the source and all of it but its label taken out, until no unsafe link is left (``[[a](x:)](y:)``
leaves ``[a](y:)`` once). Then what only a reader laxer than CommonMark would take for a link to an
unsafe scheme (``\\[a](x:)``, ``[a](x: y)``) gets a zero-width space between its "]" and "(",
outside code. Tags and ``<…>`` autolinks are left to the ``<`` escaping (``markup.escape_markdown``,
which judges links again once it is done: ``&#60;`` can make a target of what ``<`` could not).

A live card is sent the answer so far on each update: ``unfinished_link`` finds a link still
being written at its end, which the live view holds back until it is closed (then shown as it
will be in the reply: a safe link as written, an unsafe one as its label).
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from collections.abc import Callable
from typing import Any

from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.rules_inline import StateInline, backtick, image, link
from markdown_it.token import Token

from ..link_hosts import misleading_label
from ..markdown import SAFE_SCHEMES, clean

#: What a parse leaves in its ``env``: the inline token being parsed, each link or image found as
#: (inline token, start, end, label start, label end, target), each code span as (token, start, end).
_BLOCK = "feishu_block"
_FOUND = "feishu_links"
_CODE = "feishu_code"
#: A "](" and a target with a scheme not in ``SAFE_SCHEMES``, whatever comes after it.
_LOOSE = re.compile(r"\](?=\(\s*(?:<|&#60;)?(?!https?://|mailto:)[a-z][a-z0-9+.-]*:)", re.IGNORECASE)

#: A "![" left once every image is a link: what only a laxer reader than CommonMark would take
#: for an image (``![a](https://x y.png)``), which Feishu would look up as an image key.
_LOOSE_IMAGE = re.compile(r"!(?=\[[^\]\n]*\]\()")

#: What styles a label's text or escapes a character in it, shown as nothing of its own.
_STYLE_MARKS = re.compile(r"[\\*_~`]")

_Rule = Callable[[StateInline, bool], bool]


def _recording(rule: _Rule, kind: str) -> _Rule:
    """``rule`` (markdown-it's ``link``, ``image`` or ``backticks``), noting where what it makes lies:
    a link or image with its label and target, a code span."""
    skip = 1 if kind == "image" else 0  # the "!" before an image's "["

    def found(state: StateInline, silent: bool) -> bool:
        start, tokens = state.pos, len(state.tokens)
        if not rule(state, silent):
            return False
        if silent:
            return True
        block = state.env[_BLOCK]
        made = next((token for token in state.tokens[tokens:] if token.type in _MADE), None)
        if made is None:  # a backtick run never closed: text
            return True
        if made.type == "code_inline":
            state.env[_CODE].append((block, start, state.pos))
            return True
        label_end = state.md.helpers.parseLinkLabel(state, start + skip, not skip)
        target = str(made.attrs.get("src" if skip else "href", ""))
        state.env[_FOUND].append((block, start, state.pos, start + 1 + skip, label_end, target))
        return True

    return found


_MADE = ("link_open", "image", "code_inline")


def _inline(state: StateCore) -> None:
    """markdown-it's ``inline`` core rule, noting which inline token is being parsed."""
    for token in state.tokens:
        if token.type == "inline":
            state.env[_BLOCK] = token
            token.children = []
            state.md.inline.parse(token.content, state.md, state.env, token.children)


def _parser(indented_code: bool, tables: bool = False) -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False})
    md.enable(["strikethrough", "table"] if tables else "strikethrough")
    md.disable(["autolink", "html_inline", "html_block"])  # "<…>" is text: "<" is escaped after
    if not indented_code:
        md.disable("code")
    md.validateLink = lambda url: True  # type: ignore[method-assign]  # find every link, to judge it here
    md.inline.ruler.at("link", _recording(link, "link"))
    md.inline.ruler.at("image", _recording(image, "image"))
    md.inline.ruler.at("backticks", _recording(backtick, "code"))
    md.core.ruler.at("inline", _inline)
    return md


#: Two readings: whether Feishu takes an indented line for code (where CommonMark does) is not
#: sure (its rich text guide says so now, older pages list fenced code only); a link either finds
#: is judged.
_READINGS = (_parser(indented_code=False), _parser(indented_code=True))
#: Where code is, read with and without tables too (Feishu's guide lists GFM tables: a row is cut
#: into cells at its "|" before the code spans in them are read, so they can differ).
_CODE_READINGS = (*_READINGS, _parser(indented_code=False, tables=True), _parser(True, tables=True))


def safe_links(text: str) -> str:
    """``text`` with every link and image to an unsafe target shown as its label alone, and one
    whose label names another address than its target (``misleading_label``) with its target as
    its label."""
    while "[" in text:
        shown = _once(text)
        if shown == text:
            break
        text = shown
    return text


def _once(text: str) -> str:
    """``text`` with the unsafe links markdown-it finds in it taken out, their labels kept; when
    none is left, with what only a laxer reader would take for one broken (``_LOOSE``)."""
    source = clean(text)
    lines = source.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    cuts: list[tuple[int, int, str]] = []
    code: list[list[range]] = []  # what each reading takes for code
    for reading in _CODE_READINGS if "|" in source else _READINGS:  # a table's cells read apart
        env: dict[str, Any] = {_FOUND: [], _CODE: []}
        tokens = reading.parse(source, env)
        found = env[_FOUND]
        for block, start, end, label, label_end, target in found:
            if not target.lower().startswith(SAFE_SCHEMES) or _in_label(found, block, start, end):
                cuts += _cut(block, (start, label, label_end, end), source, starts)
            elif label - start == 2:  # "![": an image, its target an address, not an image key
                cuts += _unimaged(block, (start, label, label_end), target, source, starts)
            elif misleading_label(_as_shown(block.content[label:label_end]), target):
                cuts += _relabel(block, (label, label_end), target, source, starts)
        fences = [range(starts[t.map[0]], starts[t.map[1]]) for t in tokens if t.type == "fence" and t.map]
        spans = [_mapped(block, (start, end), source, starts) for block, start, end in env[_CODE]]
        code.append(fences + [range(*span) for span in spans if span])
    if cuts:
        return _without(source, cuts)
    shown = _LOOSE.sub(lambda found: "]" if _in_code(found.start(), code) else "]\u200b", source)
    shown = _LOOSE_IMAGE.sub(lambda found: "!" if _in_code(found.start(), code) else "!\u200b", shown)
    return text if shown == source else shown


def _as_shown(label: str) -> str:
    """A link's label in the source as the card shows it: entities as their characters, without
    the marks that style it or escape a character ("**accounts**\\.example&#46;com" reads as an
    address as much as "accounts.example.com")."""
    return _STYLE_MARKS.sub("", html.unescape(label))


def code_places(source: str, spans: bool = True) -> bytearray:
    """Which characters of ``source`` (``clean`` already) every reading shows as code (1; else
    0): a code span's (unless ``spans`` is False), a code block's lines (its fence lines aside).
    In a reading with tables, nothing in a table's rows is code: what is code in its cells is left
    to no reading's guess."""
    starts = [0]
    for line in source.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    shown = bytearray(b"\x01") * len(source)
    for reading in _CODE_READINGS if "|" in source else _READINGS:
        env: dict[str, Any] = {_FOUND: [], _CODE: []}
        tokens = reading.parse(source, env)
        code = bytearray(len(source))
        for first, stop in (_code_lines(token) for token in tokens):
            _mark(code, starts[first], starts[stop], 1)
        for block, start, end in env[_CODE] if spans else ():
            span = _mapped(block, (start, end), source, starts)
            if span:
                _mark(code, span[0], span[1], 1)
        for token in tokens:
            if token.type == "table_open" and token.map:
                _mark(code, starts[token.map[0]], starts[token.map[1]], 0)
        both = int.from_bytes(shown, "big") & int.from_bytes(code, "big")
        shown = bytearray(both.to_bytes(len(source), "big"))
    return shown


def _mark(places: bytearray, start: int, end: int, value: int) -> None:
    """``places[start:end]`` (cut to its length) set to ``value``."""
    end = min(end, len(places))
    if start < end:
        places[start:end] = bytes([value]) * (end - start)


def _code_lines(token: Token) -> tuple[int, int]:
    """The lines of a code block ``token`` holds its code on (first, past the last); (0, 0) for
    any other token."""
    if token.map is None or token.type not in ("fence", "code_block"):
        return 0, 0
    first = token.map[0] + (token.type == "fence")  # a fence's opening line: its info, not code
    content = token.content
    lines = content.count("\n") + bool(content and not content.endswith("\n"))  # the last may have no end
    return first, min(first + lines, token.map[1])


def _cut(block: Token, at: tuple[int, ...], source: str, starts: list[int]) -> list[tuple[int, int, str]]:
    """What to take out of the source for one unsafe link (``at``: where it starts, its label
    starts and ends, and where it ends, in ``block``'s content): all of it but its label. Should
    its place not be found, every "[" of its block, so no link is left there."""
    mapped = _mapped(block, at, source, starts)
    if mapped is None:
        return _every_bracket(block, source, starts)
    start, label, label_end, end = mapped
    return [(start, label, ""), (label_end, end, "")]


def _relabel(
    block: Token, at: tuple[int, int], target: str, source: str, starts: list[int]
) -> list[tuple[int, int, str]]:
    """What to put in the source for a link whose label names another address: its label
    replaced by its target (punctuation escaped); every "[" of its block taken out should its
    place not be found."""
    mapped = _mapped(block, at, source, starts)
    if mapped is None:
        return _every_bracket(block, source, starts)
    return [(mapped[0], mapped[1], re.sub(r"([\\\[\]`*_~<>!])", r"\\\1", target))]


def _in_label(found: list[tuple[Any, ...]], block: Token, start: int, end: int) -> bool:
    """True for an image (from ``start`` to ``end`` in ``block``) in the label of a link: shown
    as its alt text (made a link, it would be a link in a link)."""
    if block.content[start : start + 1] != "!":
        return False
    return any(b is block and s < start and end <= e for b, s, e, *_ in found)


def _unimaged(
    block: Token, at: tuple[int, int, int], target: str, source: str, starts: list[int]
) -> list[tuple[int, int, str]]:
    """What to take out of the source for an image to an address (``at``: where it starts, its
    alt text starts and ends): its "!", so it is a link to the address; its target as its label
    when it has no alt text (punctuation escaped). Every "[" of its block taken out should its
    place not be found."""
    mapped = _mapped(block, at, source, starts)
    if mapped is None:
        return _every_bracket(block, source, starts)
    start, label, label_end = mapped
    # ("Done!![a](…)": a zero-width space keeps the "!" before it from making it an image again)
    cuts = [(start, start + 1, "\u200b" if source[start - 1 : start] == "!" else "")]
    if not source[label:label_end].strip():
        cuts.append((label, label_end, re.sub(r"([\\\[\]`*_~<>!])", r"\\\1", target)))
    return cuts


def _every_bracket(block: Token, source: str, starts: list[int]) -> list[tuple[int, int, str]]:
    """Every "[" of ``block``'s lines taken out: no link is left there."""
    first, last = block.map or (0, len(starts) - 1)
    return [(i, i + 1, "") for i in range(starts[first], starts[last] - 1) if source[i] == "["]


def _in_code(at: int, code: list[list[range]]) -> bool:
    """True when every reading takes ``at`` for code."""
    return all(any(at in span for span in spans) for spans in code)


def _mapped(block: Token, offsets: tuple[int, ...], source: str, starts: list[int]) -> tuple[int, ...] | None:
    """``offsets`` in ``block``'s inline content as offsets in the source: each content line is the
    rest of its source line (container marks and indentation left out). None when a place is not
    found there, or holds another character (a tab cut in two by indentation becomes spaces)."""
    first = block.map[0] if block.map else 0
    content_starts, source_starts = [], []
    at = 0
    for index, piece in enumerate(block.content.split("\n")):
        kept = piece.lstrip(" ")
        line = first + index
        text = source[starts[line] : starts[line + 1] - 1] if line + 1 < len(starts) else ""
        found = text.rfind(kept) if kept else len(text)
        if found < 0:
            return None
        content_starts.append(at)
        source_starts.append(starts[line] + found - (len(piece) - len(kept)))
        at += len(piece) + 1
    mapped = []
    for offset in offsets:
        line = bisect_right(content_starts, offset) - 1
        mapped.append(source_starts[line] + offset - content_starts[line])
        back = int(offset == len(block.content) or block.content[offset] == "\n")  # the one before
        here, there = mapped[-1] - back, offset - back
        if source[here : here + 1] != block.content[there : there + 1]:
            return None
    return tuple(mapped)


def _without(source: str, cuts: list[tuple[int, int, str]]) -> str:
    """``source`` with the spans ``cuts`` replaced by their text (taken out: ""), each once."""
    out, at = [], 0
    for begin, end, put in sorted(set(cuts)):
        out.append(source[at:begin])
        out.append(put if begin >= at else "")
        at = max(at, end)
    out.append(source[at:])
    return "".join(out)


_FENCE = re.compile(r"^ {0,3}(?:```|~~~)", re.MULTILINE)
_TICKS = re.compile(r"`+")


def unfinished_link(text: str) -> int:
    """Where a link or image still being written at the end of ``text`` starts (its ``[``, or the
    ``!`` before it), so a live view can hold it back until it is closed; ``len(text)`` when there
    is none. Still being written: a label not closed on its line, a label closed at the very end,
    or a target whose ``(`` is not closed yet (in the last paragraph, outside code)."""
    fences = list(_FENCE.finditer(text))
    if len(fences) % 2:
        return len(text)  # inside a code block: nothing there is a link
    at = max(text.rfind("\n\n"), fences[-1].end() if fences else 0, 0)
    opens: list[int] = []
    while at < len(text):
        char = text[at]
        if char == "`":  # a code span holds no link; a backtick run never closed is text
            run = _TICKS.match(text, at).group()  # type: ignore[union-attr]
            close = re.compile(rf"(?<!`){run}(?!`)").search(text, at + len(run))
            at = close.end() if close else at + len(run)
            continue
        if char == "[":
            opens.append(at)
        elif char == "]" and opens:
            label = opens.pop()
            if at + 1 == len(text):
                return _opener(text, label)
            if text[at + 1] == "(":
                end = _target_end(text, at + 2)
                if end is None:
                    return _opener(text, label)
                at = end
                continue
        at += 2 if char == "\\" else 1
    unclosed = [start for start in opens if "\n" not in text[start:]]
    return _opener(text, unclosed[0]) if unclosed else len(text)


def _target_end(text: str, at: int) -> int | None:
    """Where a link's ``(target "title")`` starting at ``at`` ends (past its ``)``), None when it
    is not closed yet; a blank line ends it (no link then)."""
    depth = 1
    while at < len(text):
        if text.startswith("\n\n", at):
            return at
        char = text[at]
        if char == "\\":
            at += 2
            continue
        depth += (char == "(") - (char == ")")
        at += 1
        if not depth:
            return at
    return None


def _opener(text: str, label: int) -> int:
    """The start of the link whose label opens at ``label``: its ``!`` for an image."""
    return label - 1 if label and text[label - 1] == "!" else label
