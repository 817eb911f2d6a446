"""Slack mrkdwn: escaping untrusted text, Markdown conversion, cutting and splitting.

Model text is untrusted: it must never ping a channel or a user, and it must never
smuggle Slack's ``<…>`` control sequences, so every piece of it goes through
``escape_mrkdwn`` (or ``markdown_to_mrkdwn``, which parses the Markdown once with
``clarigate.adapters.markdown`` and escapes every text it renders).
"""

from __future__ import annotations

import re
from dataclasses import replace

from clarigate.agent.protocol.graphemes import boundary_before, shorten

from ..markdown import Block, Renderer

ELLIPSIS = "…"
ZERO_WIDTH_SPACE = "\u200b"

# Bare "@here" is not a ping for API posts without link_names, but clients and
# future flags vary: break the word so it can never become a broadcast. No word boundary
# is required after it: in "@here大家" the CJK letters count as word characters.
# Slack pings only for ``<!here>`` (and, with ``link_names``, which clarigate never sets, the
# plain word): an address is never one, so a link's target is left whole (``escape_address``),
# as is an email address ("ops@here.com": its "@" has a name before it and a domain after).
_BROADCAST_WORDS = re.compile(r"@(channel|here|everyone)", re.IGNORECASE)
_EMAIL_DOMAIN = re.compile(r"(?:[A-Za-z0-9-]{1,63}\.)+[A-Za-z]{2,63}")


def escape_address(address: str) -> str:
    """Escape ``&``, ``<``, ``>`` of a link's target (``<target|label>``), nothing else: Slack
    never reads a mention in it, and a zero-width space would break the address."""
    return address.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def break_broadcasts(escaped: str, kept: list[tuple[int, int]] | None = None) -> str:
    """Escaped text with every broadcast word broken by a zero-width space, but those of an email
    address and those starting in a ``kept`` span (an address in it)."""

    def broken(word: re.Match[str]) -> str:
        at = word.start()
        if any(start <= at < end for start, end in kept or []) or _in_email(escaped, at):
            return word.group(0)
        return "@" + ZERO_WIDTH_SPACE + word.group(1)

    return _BROADCAST_WORDS.sub(broken, escaped)


def _in_email(text: str, at: int) -> bool:
    """Whether the ``@`` at ``at`` is an email address's: a name before it, a domain after."""
    name = text[at - 1 : at]
    return name.isascii() and name.isalnum() and _EMAIL_DOMAIN.match(text, at + 1) is not None


def escape_mrkdwn(text: str) -> str:
    """Escape ``&``, ``<``, ``>`` and break broadcast words, so text shows exactly as written."""
    return break_broadcasts(escape_address(text))


def cut(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters, marked with an ellipsis when cut (never
    inside a character as shown: an emoji sequence, a flag, a letter and its marks; ``graphemes``)."""
    return shorten(text, limit, strip=True)


def cut_escaped(text: str, limit: int) -> str:
    """Escape ``text`` and cut it to ``limit`` without splitting an ``&amp;``-style entity or a
    character as shown."""
    escaped = escape_mrkdwn(text)
    if len(escaped) <= limit:
        return escaped
    head = escaped[: boundary_before(escaped, max(limit - 1, 0), floor=0)]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]
    return head.rstrip() + ELLIPSIS


# What stands for a code block's fence while a block renders (``clean`` takes NUL out of model
# text), so that any other run of three backticks can be broken first (``_fenced``).
_FENCE_MARK = "\x00"
# Between the second and third of three backticks in a row: Slack opens or closes a code block at
# "```" wherever it stands, and ``split_mrkdwn`` counts on fences being the code blocks' own.
_THIRD_BACKTICK = re.compile(r"(?<=``)(?=`)")


def _fenced(rendered: str) -> str:
    """``rendered`` with every run of three backticks broken by a zero-width space (one shown
    as written), then its code blocks' fences put in."""
    return _THIRD_BACKTICK.sub(ZERO_WIDTH_SPACE, rendered).replace(_FENCE_MARK, "```")


def _literal(text: str, markers: str) -> str:
    """``text`` with each of ``markers`` (mrkdwn's ``*``, ``_``, ``~``, a backtick) between two
    zero-width spaces, so it neither opens nor closes a style (mrkdwn has no escape character);
    one inside a word ("snake_case") is left alone, which mrkdwn never reads as a style."""
    if not any(marker in text for marker in markers):
        return text

    def defused(found: re.Match[str]) -> str:
        at, end = found.start(), found.end()
        if text[at - 1 : at].isalnum() and text[end : end + 1].isalnum():
            return found.group(0)
        return ZERO_WIDTH_SPACE + found.group(0) + ZERO_WIDTH_SPACE

    return re.sub(f"[{re.escape(markers)}]", defused, text)


class SlackMrkdwn(Renderer):
    """Slack's mrkdwn: ``*bold*``, ``_italic_``, ``~strike~``, ``<url|label>``; all text escaped.

    mrkdwn cannot nest a style inside itself (``*a *b* c*`` ends at the second ``*``), so an
    inner bold, italic or strike-through of the same kind shows as plain text. The only "```"
    in the result are the code blocks' fences: one in model text or code (a "```" line inside
    an indented code block, a "````" fence's content) shows as written, a zero-width space in it.
    """

    def blocks(self, markdown: str) -> list[Block]:
        """The top-level blocks of ``markdown`` in mrkdwn, no "```" in them but their fences."""
        return [replace(block, rendered=_fenced(block.rendered)) for block in super().blocks(markdown)]

    def text(self, text: str, within: tuple[str, ...]) -> str:
        """Model text escaped, broadcast words broken, its ``*``, ``_`` and ``~`` literal
        (``_literal``: the parser has read those that style already)."""
        return _literal(escape_mrkdwn(text), "*_~")

    def code(self, code: str, within: tuple[str, ...]) -> str:
        """A code span, its text escaped (entities show as characters inside it too), a backtick in
        it literal (``_literal``): mrkdwn would end the span there."""
        return f"`{_literal(escape_mrkdwn(code), '`')}`"

    def code_block(self, code: str, language: str, within: tuple[str, ...]) -> str:
        """A code block between fences of their own lines (``split_mrkdwn`` closes a cut one)."""
        fence = _FENCE_MARK
        return f"{fence}\n{escape_mrkdwn(code)}\n{fence}" if code else f"{fence}\n{fence}"

    def bare_url(self, url: str, within: tuple[str, ...]) -> str:
        """An address written out: text Slack links itself, or, a broadcast word in it, a link
        to it whole (``<url|url>``), the address it shows broken like any text."""
        shown = escape_mrkdwn(url)  # an address's "_" is no style: Slack links it whole
        if "|" in url or shown == escape_address(url):
            return shown
        return f"<{escape_address(url)}|{shown}>"

    def link(self, href: str, inner: str, label: str, within: tuple[str, ...]) -> str:
        """``<url|label>``: the label as plain text (mrkdwn styles nothing inside a link), the
        target whole (``escape_address``)."""
        if "|" in href:
            return inner
        shown = escape_mrkdwn(label.strip()).replace("|", "¦")
        return f"<{escape_address(href)}|{shown}>"

    def strong(self, inner: str, within: tuple[str, ...]) -> str:
        """``*bold*`` (plain inside another bold or a heading, which is bold already)."""
        return inner if "strong" in within or "heading" in within else f"*{inner}*"

    def emphasis(self, inner: str, within: tuple[str, ...]) -> str:
        """``_italic_``."""
        return inner if "em" in within else f"_{inner}_"

    def strike(self, inner: str, within: tuple[str, ...]) -> str:
        """``~strike~``."""
        return inner if "s" in within else f"~{inner}~"

    def quote(self, inner: str, within: tuple[str, ...]) -> str:
        """Every line after ``>`` (escaped, as Slack itself sends quotes); quotes do not nest."""
        if "blockquote" in within:
            return inner
        return "\n".join(f"&gt; {line}" if line else "&gt;" for line in inner.split("\n"))


_MRKDWN = SlackMrkdwn()


def markdown_to_mrkdwn(markdown: str) -> str:
    """Agent Markdown as Slack mrkdwn: emphasis, code, links, lists, headings; all escaped."""
    return _MRKDWN.render(markdown)


def _inside_control(line: str, index: int) -> bool:
    """True when ``index`` falls inside a ``<…>`` link or mention of escaped mrkdwn."""
    return line.rfind("<", 0, index) > line.rfind(">", 0, index)


def _break_at(line: str, room: int) -> tuple[int, int]:
    """Where to break a line longer than ``room``: ``(end of this piece, start of the next)``.

    At the last space in the second half that is not inside a link (the space dropped);
    else at ``room``, moved back so a link, an ``&amp;``-style entity or a character as shown (an
    emoji sequence, a flag, a letter and its marks: ``graphemes``) stays whole.
    """
    space = line.rfind(" ", 0, room + 1)
    while space > room // 2:
        if not _inside_control(line, space):
            return space, space + 1
        space = line.rfind(" ", 0, space)
    end = boundary_before(line, room)
    if _inside_control(line, end) and line.rfind("<", 0, end) > 0:
        end = line.rfind("<", 0, end)
    amp = line.rfind("&", 0, end)
    if amp > 0 and end - amp < len("&amp;") and ";" not in line[amp:end]:
        end = amp
    return end, end


# A link or mention of escaped mrkdwn: ``<target>`` or ``<target|label>``.
_CONTROL = re.compile(r"<([^<>|]*)(?:\|([^<>]*))?>")


def _unlinked(control: re.Match[str]) -> str:
    """A link too long for one piece as text: its label, then its address in brackets (which
    Slack links itself), split between words like any text; the address alone when it is the label.
    The address is text then: its broadcast words are broken."""
    target, label = break_broadcasts(control.group(1)), (control.group(2) or "").strip()
    return f"{label} ({target})" if label and label != target else target


def _line_pieces(line: str, room: int) -> list[str]:
    """One line cut into pieces of at most ``room`` characters, between words when possible.

    A ``<…>`` control longer than ``room`` cannot stay whole in any piece: it is rewritten as
    text first (``_unlinked``), so no piece ever holds a ``<`` without its ``>``."""
    if len(line) > room:
        line = _CONTROL.sub(lambda m: _unlinked(m) if len(m.group(0)) > room else m.group(0), line)
    pieces: list[str] = []
    while len(line) > room:
        end, start = _break_at(line, room)
        pieces.append(line[:end])
        line = line[start:]
    return [*pieces, line]


def split_mrkdwn(text: str, limit: int) -> list[str]:
    """Split mrkdwn into chunks of at most ``limit`` characters, at line breaks when possible.

    A code block cut in two is closed at the end of one chunk and reopened in the next; no chunk
    shows a code block of nothing that the text did not have (``_Chunks``). Every "```" is a
    fence, wherever it stands ("1. ```", "&gt; ```"): ``markdown_to_mrkdwn`` writes none but its
    code blocks' fences.
    """
    chunks = _Chunks(limit)
    for line in text.split("\n"):
        chunks.add(line)
    return [chunk for chunk in chunks.end() if chunk.strip() and chunk.strip() != "```\n```"]


class _Chunks:
    """Lines of mrkdwn packed into chunks of at most ``limit`` characters.

    A cut falling right after a code block's opening fence (its first line too long for what is
    left of the chunk) leaves the fence out: the code starts in the next chunk, what stood before
    the fence on its line ("1.") kept. A block reopened only for its closing fence is left out
    with it. Either would show a code block with nothing in it.
    """

    def __init__(self, limit: int) -> None:
        self.room = limit - 8  # space kept for closing and reopening a code fence
        self.chunks: list[str] = []
        self.lines: list[str] = []
        self.size = 0
        self.code: int | None = None  # where the open code block's fence stands in ``lines``
        self.reopened = False  # that fence reopens a block the chunk before closed
        self.quoted = False  # the block is in a quote: its lines start with "&gt;"

    def add(self, line: str) -> None:
        """One line of the text, cut into pieces when longer than a chunk (``_line_pieces``)."""
        fence = line.count("```") % 2 == 1
        for piece in _line_pieces(line, self.room):
            if self.size + len(piece) + 1 > self.room and self.lines:
                self._flush()
            if fence and "```" in piece and self.reopened and self._code_empty():
                self.lines, self.size = [], 0  # reopened for nothing but its close: neither shows
                continue
            self.lines.append(piece)
            self.size += len(piece) + 1
        if fence and self.code is None:
            self.code, self.quoted = len(self.lines) - 1, line.lstrip().startswith("&gt;")
        elif fence:
            self.code = None
        self.reopened = self.reopened and self.code is not None

    def end(self) -> list[str]:
        """The chunks, the last lines' too (left as written: a code block the text left open stays
        open)."""
        lines = self._without_empty_code()
        if any(line.strip() for line in lines):
            self.chunks.append("\n".join(lines))
        return self.chunks

    def _flush(self) -> None:
        """The lines so far as a chunk, an open code block closed and reopened for the next (or,
        nothing in it yet, left for the next: ``_without_empty_code``)."""
        if self.code is None:
            self.chunks.append("\n".join(self.lines))
            self.lines, self.size = [], 0
            return
        if self._code_empty():
            body = "\n".join(self._without_empty_code()).rstrip()
        else:
            body = "\n".join([*self.lines, "```"])
        if body.strip():
            self.chunks.append(body)
        reopen = "&gt; ```" if self.quoted else "```"  # a quote's code goes on in the quote
        self.lines, self.size, self.code, self.reopened = [reopen], len(reopen) + 1, 0, True

    def _code_empty(self) -> bool:
        """True when the open code block has nothing to show yet (blank lines at most, in a quote
        a line of its mark alone)."""
        if self.code is None:
            return False
        mark = "&gt;" if self.quoted else ""
        return not any(line.strip().removeprefix(mark).strip() for line in self.lines[self.code + 1 :])

    def _without_empty_code(self) -> list[str]:
        """The lines, an open code block with nothing in it left out (a list item's marker
        before the fence kept)."""
        if self.code is None or not self._code_empty():
            return self.lines
        opening = self.lines[self.code]
        before = opening[: opening.rfind("```")].rstrip()
        shows = before.replace("&gt;", "").strip()  # a list's marker, not a quote's alone
        return [*self.lines[: self.code], *([before] if shows else [])]
