"""Agent Markdown parsed once (markdown-it-py, CommonMark) and rendered by each platform's rules.

The parser turns model text into markdown-it's token stream; ``Renderer`` walks it and asks its
platform subclass how each piece looks (Telegram HTML, Slack mrkdwn). Model text is untrusted:
a renderer escapes every piece of text it is given, so markup can only come from its own hooks.

The parser is CommonMark with strikethrough, without raw HTML (tags in model text are text) and
without reference definitions (a piece cut from a long reply must render alone exactly as it did
inside the whole). A bare ``http(s)://`` address is one ``bare_url`` token: its ``_``, ``*`` and
``@`` are parts of the address, never emphasis or a mention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from markdown_it import MarkdownIt
from markdown_it.rules_inline import StateInline
from markdown_it.token import Token

from .link_hosts import misleading_label

#: Schemes a link may point to on every platform; anything else (``javascript:``, ``tg://``…)
#: is shown as its label only.
SAFE_SCHEMES = ("http://", "https://", "mailto:")

_SCHEME_BEFORE = re.compile(r"(?:^|[^A-Za-z0-9.+-])(https?)$", re.IGNORECASE)
# After "://": user info, a host, a port, then a path, query or fragment (the characters
# Telegram's own link detection takes into an address, less "`", which starts a code span).
_ADDRESS = re.compile(r"(?:[\w.~%!$&+,;=:-]+@)?[\w.~-]+(?::\d{1,5})?(?:[/?#][^\s<>\"«»`]*)?")
_CLOSING = {")": "(", "]": "[", "}": "{"}
# Not part of an address at its end: "see https://x.y.", "**https://x.y**", "_https://x.y_".
_ADDRESS_TAIL = ".,:;!?'`(*_~\""


def _address(text: str) -> str:
    """The address at the start of ``text`` (after "://"): up to an unmatched closing bracket
    ("(see https://x.y/a)" ends at "a"), trailing punctuation left out."""
    depth = {"(": 0, "[": 0, "{": 0}
    for index, char in enumerate(text):
        if char in depth:
            depth[char] += 1
        elif char in _CLOSING:
            if not depth[_CLOSING[char]]:
                text = text[:index]
                break
            depth[_CLOSING[char]] -= 1
    return text.rstrip(_ADDRESS_TAIL)


def _bare_url(state: StateInline, silent: bool) -> bool:
    """Inline rule: ``https://…`` in running text as one ``bare_url`` token (outside links)."""
    pos = state.pos
    if state.linkLevel > 0 or not state.src.startswith("://", pos):
        return False
    scheme = _SCHEME_BEFORE.search(state.pending)
    body = _ADDRESS.match(state.src, pos + 3, state.posMax)
    if scheme is None or body is None:
        return False
    rest = _address(body.group(0))
    if not rest.strip(".~-"):
        return False
    if not silent:
        name = scheme.group(1)
        state.pending = state.pending[: -len(name)]
        token = state.push("bare_url", "", 0)
        token.content = f"{name}://{rest}"
    state.pos = pos + 3 + len(rest)
    return True


class _EveryLink(MarkdownIt):
    """Every target read as a link, ``javascript:`` and ``data:`` included: markdown-it leaves those
    as text ("[label](javascript:…)" shown as written); the renderer shows an unsafe one's label."""

    def validateLink(self, url: str) -> bool:  # noqa: N802 (markdown-it's name)
        return True


def _parser() -> MarkdownIt:
    md = _EveryLink("commonmark", {"html": False})
    md.enable("strikethrough")
    md.disable(["reference", "html_block", "html_inline"])
    md.inline.ruler.before("newline", "bare_url", _bare_url)
    return md


_PARSER = _parser()


def parse(markdown: str) -> list[Token]:
    """The token stream of ``markdown`` (``clean`` already), as every renderer here reads it."""
    return _PARSER.parse(markdown)


#: Where a bare address starts in running text (``address_spans``), as ``_bare_url`` reads one.
_URL_START = re.compile(r"(?<![A-Za-z0-9.+-])https?://", re.IGNORECASE)


def address_spans(text: str) -> list[tuple[int, int]]:
    """Where ``text`` holds ``http(s)://`` addresses as the parser reads a bare one (``bare_url``):
    its ``@`` and the words after it are the address's, never a mention."""
    spans = []
    for start in _URL_START.finditer(text):
        body = _ADDRESS.match(text, start.end())
        rest = _address(body.group(0)) if body else ""
        if rest.strip(".~-"):
            spans.append((start.start(), start.end() + len(rest)))
    return spans


def clean(markdown: str) -> str:
    """``markdown`` with the line ends markdown-it counts lines by, and no NUL characters."""
    return markdown.replace("\r\n", "\n").replace("\r", "\n").replace("\x00", "")


@dataclass(frozen=True)
class Block:
    """One top-level block of a reply: its source, how it renders, and whether a blank line
    separates it from the block before (its separator is then ``"\\n\\n"``, else ``"\\n"``)."""

    source: str
    rendered: str
    after_blank: bool
    # A code block's fence ("```"), one no line of its code can close however the code is cut
    # (``enclosing_fence``; an indented block gets one too), its code, and its opening line.
    fence: str = ""
    code: str = ""
    opening: str = ""

    @property
    def separator(self) -> str:
        """What goes between the block before and this one, in source and rendering alike."""
        return "\n\n" if self.after_blank else "\n"


@dataclass
class _Frame:
    """An open container of the walk (a paragraph, a list, a link…) and what it holds so far."""

    token: Token | None
    parts: list[str] = field(default_factory=list)
    plain: list[str] = field(default_factory=list)  # the visible text, for link labels
    spans: list[tuple[int, int]] = field(default_factory=list)  # each block part's source lines

    def joined(self) -> str:
        """The block parts, a blank line between two where the source has one."""
        out: list[str] = []
        for index, part in enumerate(self.parts):
            if index:
                out.append("\n\n" if self.spans[index][0] > self.spans[index - 1][1] + 1 else "\n")
            out.append(part)
        return "".join(out)


class Renderer:
    """Walks the token stream; a platform subclass overrides the hooks below.

    Hooks receive already rendered inner text and ``within``, the types of the containers
    around them (``"heading"``, ``"strong"``, ``"link"``, ``"blockquote"``…), so a platform
    can flatten what it cannot nest. Only ``text``, ``code`` and the code block see model text.
    """

    def render(self, markdown: str) -> str:
        """``markdown`` in this platform's markup."""
        blocks = self.blocks(markdown)
        return "".join((block.separator if i else "") + block.rendered for i, block in enumerate(blocks))

    def blocks(self, markdown: str) -> list[Block]:
        """The top-level blocks of ``markdown``, each rendered (one parse for all of them)."""
        source = clean(markdown)
        lines = source.split("\n")
        tokens = parse(source)
        out: list[Block] = []
        end = -1  # the previous block's last line with text
        start = 0
        for index, token in enumerate(tokens):
            if token.level != 0:
                continue
            if token.nesting == 1:
                start = index
                continue
            opener = tokens[start] if token.nesting == -1 else token
            first, last = _span(opener, lines)
            rendered = self._walk(tokens[start : index + 1] if token.nesting == -1 else [token], lines)
            block = Block("\n".join(lines[first : last + 1]), rendered, bool(out) and first > end + 1)
            if token.type in ("fence", "code_block"):
                block = _with_code(block, token, lines[first])
            out.append(block)
            end = last
        return out

    # -- the walk ---------------------------------------------------------------------------

    def _walk(self, tokens: list[Token], lines: list[str]) -> str:
        """One top-level block's tokens as markup."""
        stack = [_Frame(None)]
        for token in tokens:
            if token.nesting == 1:
                stack.append(_Frame(token))
                continue
            if token.nesting == -1:
                frame = stack.pop()
                assert frame.token is not None
                token = frame.token
                rendered = self._close_block(frame, stack)
            else:
                rendered = self._leaf_block(token, stack)
            stack[-1].parts.append(rendered)
            stack[-1].spans.append(_span(token, lines))
        return stack[0].joined()

    def _leaf_block(self, token: Token, stack: list[_Frame]) -> str:
        within = _types(stack)
        if token.type == "inline":
            return self._inline(token.children or [], within)
        if token.type in ("fence", "code_block"):
            language = token.info.strip().split(" ")[0] if token.info.strip() else ""
            return self.code_block(token.content.removesuffix("\n"), language, within)
        if token.type == "hr":
            return self.rule()
        return self.text(token.content, within)

    def _close_block(self, frame: _Frame, stack: list[_Frame]) -> str:
        opener = frame.token
        assert opener is not None
        kind = opener.type.removesuffix("_open")
        within = _types(stack)
        inner = frame.joined()
        if kind == "heading":
            return self.heading(inner, int(opener.tag[1:]), within)
        if kind == "blockquote":
            return self.quote(inner, within)
        if kind == "list_item":
            marker = f"{opener.info}{opener.markup}" if opener.info else "•"
            depth = sum(1 for kept in within if kept in ("bullet_list", "ordered_list"))
            return self.list_item(marker, inner, depth)
        return inner  # paragraphs and lists: their parts, one a line

    def _inline(self, tokens: list[Token], within: tuple[str, ...]) -> str:
        """A paragraph's or heading's inline tokens as markup."""
        stack = [_Frame(None)]
        for token in tokens:
            if token.nesting == 1:
                stack.append(_Frame(token))
                continue
            if token.nesting == -1:
                frame = stack.pop()
                rendered = self._close_inline(frame, within + _types(stack))
                stack[-1].parts.append(rendered)
                stack[-1].plain.extend(frame.plain)
                continue
            inside = within + _types(stack)
            rendered, plain = self._leaf_inline(token, inside)
            stack[-1].parts.append(rendered)
            stack[-1].plain.append(plain)
        return "".join(stack[0].parts)

    def _leaf_inline(self, token: Token, within: tuple[str, ...]) -> tuple[str, str]:
        kind = token.type
        if kind == "code_inline":
            return self.code(token.content, within), token.content
        if kind == "bare_url":
            return self.bare_url(token.content, within), token.content
        if kind in ("softbreak", "hardbreak"):
            return self.line_break(), " "
        if kind == "image":
            alt = token.content or str(token.attrs.get("src", ""))
            return self.image(str(token.attrs.get("src", "")), alt, within), alt
        return self.text(token.content, within), token.content

    def _close_inline(self, frame: _Frame, within: tuple[str, ...]) -> str:
        opener = frame.token
        assert opener is not None
        inner = "".join(frame.parts)
        if opener.type == "strong_open":
            return self.strong(inner, within)
        if opener.type == "em_open":
            return self.emphasis(inner, within)
        if opener.type == "s_open":
            return self.strike(inner, within)
        if opener.type == "link_open":
            href = str(opener.attrs.get("href", ""))
            if not href.lower().startswith(SAFE_SCHEMES):
                return inner
            label = "".join(frame.plain)
            # "[](https://x.y)", or a label naming another address: the target is the label
            if not label.strip() or misleading_label(label, href):
                return self.link(href, self.text(href, within), href, within)
            return self.link(href, inner, label, within)
        return inner

    # -- the hooks a platform overrides -----------------------------------------------------

    def text(self, text: str, within: tuple[str, ...]) -> str:
        """Model text, escaped for the platform (mentions made inert)."""
        raise NotImplementedError

    def code(self, code: str, within: tuple[str, ...]) -> str:
        """An inline code span."""
        raise NotImplementedError

    def code_block(self, code: str, language: str, within: tuple[str, ...]) -> str:
        """A fenced or indented code block (``language`` from the fence, maybe empty)."""
        raise NotImplementedError

    def bare_url(self, url: str, within: tuple[str, ...]) -> str:
        """An address written out in the text: by default text the platform links itself."""
        return self.text(url, within)

    def link(self, href: str, inner: str, label: str, within: tuple[str, ...]) -> str:
        """A link with a safe scheme; ``inner`` is the rendered label, ``label`` its plain text."""
        raise NotImplementedError

    def image(self, src: str, alt: str, within: tuple[str, ...]) -> str:
        """An image: a link to it labelled with its alt text (inside a link, the alt text alone)."""
        if "link" in within or not src.lower().startswith(SAFE_SCHEMES):
            return self.text(alt, within)
        if misleading_label(alt, src):
            alt = src
        return self.link(src, self.text(alt, within), alt, within)

    def strong(self, inner: str, within: tuple[str, ...]) -> str:
        """Bold text."""
        raise NotImplementedError

    def emphasis(self, inner: str, within: tuple[str, ...]) -> str:
        """Italic text."""
        raise NotImplementedError

    def strike(self, inner: str, within: tuple[str, ...]) -> str:
        """Struck-through text."""
        raise NotImplementedError

    def heading(self, inner: str, level: int, within: tuple[str, ...]) -> str:
        """A heading: by default its text in bold (no platform here has headings)."""
        return self.strong(inner, within) if inner else ""

    def quote(self, inner: str, within: tuple[str, ...]) -> str:
        """A block quote of already rendered blocks."""
        raise NotImplementedError

    def list_item(self, marker: str, inner: str, depth: int) -> str:
        """One list item (``marker`` is ``•`` or ``3.``), indented two spaces a nesting level."""
        return f"{'  ' * (depth - 1)}{marker} {inner}"

    def rule(self) -> str:
        """A thematic break (``---``)."""
        return "———"

    def line_break(self) -> str:
        """A line break inside a paragraph."""
        return "\n"


def enclosing_fence(code: str, char: str = "`", least: int = 3) -> str:
    """A fence of ``char`` (at least ``least`` long) that no line of ``code`` can close, wherever
    the code is cut: longer than any run of ``char`` in it (a cut before a mid-line "```" makes
    it a line of its own)."""
    longest = max((len(run) for run in re.findall(f"{re.escape(char)}+", code)), default=0)
    return char * max(least, longest + 1)


def _with_code(block: Block, token: Token, first_line: str) -> Block:
    """``block`` with the fence, code and opening line of its code block (``token``)."""
    code = token.content.removesuffix("\n")
    if token.type == "code_block":  # indented: a cut piece of it is fenced, as a fenced one is
        fence = enclosing_fence(code)
        return replace(block, fence=fence, code=code, opening=fence)
    fence = enclosing_fence(code, token.markup[0], len(token.markup))
    opening = fence + first_line.strip()[len(token.markup) :]
    return replace(block, fence=fence, code=code, opening=opening)


def _blank(line: str) -> bool:
    """True for a line with no text (a quote's ``>`` alone counts as none)."""
    return not line.replace(">", "").strip()


def _span(token: Token, lines: list[str]) -> tuple[int, int]:
    """The first and last source line of a block token, blank lines after it left out."""
    first, end = token.map if token.map else (0, len(lines))
    last = end - 1
    code = token.type in ("fence", "code_block")  # a line of ">" in code is code
    while last > first and (not lines[last].strip() if code else _blank(lines[last])):
        last -= 1  # a list's lines include the blank lines after it
    return first, last


def _types(stack: list[_Frame]) -> tuple[str, ...]:
    return tuple(frame.token.type.removesuffix("_open") for frame in stack if frame.token is not None)
