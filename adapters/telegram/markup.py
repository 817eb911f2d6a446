"""Agent Markdown as Telegram HTML: escaping, mention neutralizing, splitting at 4096.

The reply is parsed once (``clarigate.adapters.markdown``) and rendered by ``TelegramHTML``.
Model text is untrusted: every piece of it is HTML-escaped and only the small set of tags
Telegram accepts, properly nested, is produced here, so a reply can never inject markup,
ping a user, or open a ``tg://`` link.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

from clarigate.agent.protocol.graphemes import boundary_before

from ..code_cut import (
    CodeCut,
    before_closing_run,
    cut_in_code,
    goes_on_a_paragraph,
    held_by,
    unwritten_fence,
)
from ..markdown import Block, Renderer

MAX_MESSAGE_CHARS = 4096

# "@name" would notify that user; a word joiner after "@" keeps the text readable
# but stops Telegram from making it a mention. An "@" right after a letter or digit
# (support@example.com, git@github.com:…) is never a mention and stays as is, so
# addresses copy without an invisible character in them.
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=\w)")
# "/kick@group_admin_bot" is a command to that bot, one tap sends as the person: its "@" made
# inert too, unless it names this bot (``own``: the catalog's "/ask@clari_bot" in /help).
_ADDRESSED_COMMAND = re.compile(r"(?<![A-Za-z0-9_])(/\w+)@(\w+)")
_LANGUAGE = re.compile(r"[\w+#.-]{1,30}")
# A line start that opens a block (a heading, quote or list item); the group is the character a
# backslash makes literal text.
_OPENS_BLOCK = re.compile(
    r"(?:[0-9]{1,9}(?P<dot>[.)])|(?P<bullet>[-+*])|(?P<hash>#)#{0,5})(?=[ \t]|$)|(?P<quote>>)"
)
# A character reference of Markdown (``&nbsp;``, ``&#160;``, ``&#xA0;``): never cut inside one.
_REFERENCE = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
# ASCII punctuation, which a backslash makes literal in Markdown.
_MARKDOWN_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def neutralize_mentions(text: str, own: str = "") -> str:
    """``@name`` (and ``@everyone``, ``@all``…) made inert so model text pings nobody, and a
    ``/command@bot`` so it commands no other bot than ``own`` (this bot's username)."""

    def addressed(found: re.Match[str]) -> str:
        command, bot = found.groups()
        return found.group() if own and bot.lower() == own.lower() else f"{command}@\u2060{bot}"

    return _MENTION.sub("@\u2060", _ADDRESSED_COMMAND.sub(addressed, text))


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


class TelegramHTML(Renderer):
    """Telegram's HTML (``parse_mode=HTML``): only its tags, always nested, every text escaped;
    ``own``: this bot's username, whose commands stay tappable (``neutralize_mentions``)."""

    def __init__(self, own: str = "") -> None:
        self.own = own

    def text(self, text: str, within: tuple[str, ...]) -> str:
        """Model text escaped, mentions made inert."""
        return _escape(neutralize_mentions(text, self.own))

    def code(self, code: str, within: tuple[str, ...]) -> str:
        """``<code>``: Telegram finds no mention or link inside it."""
        return f"<code>{_escape(code)}</code>"

    def code_block(self, code: str, language: str, within: tuple[str, ...]) -> str:
        """``<pre>``, with the language Telegram highlights when it is a plain name; a code block
        of nothing (a fence alone) is nothing, as a quote of nothing is."""
        if not code:
            return ""
        if _LANGUAGE.fullmatch(language):
            return f'<pre><code class="language-{language}">{_escape(code)}</code></pre>'
        return f"<pre>{_escape(code)}</pre>"

    def bare_url(self, url: str, within: tuple[str, ...]) -> str:
        """Verbatim (escaped), for Telegram to link, emphasis characters and all.

        An address with an ``@`` that could start a mention (``https://x.y/@dev``) is a link
        instead, the ``@`` in its shown text made inert: where Telegram would not take the
        whole address as one (an unknown domain, say), the ``@dev`` it left would ping.
        """
        if not _MENTION.search(url):
            return _escape(url)
        return f'<a href="{html.escape(url, quote=True)}">{self.text(url, within)}</a>'

    def link(self, href: str, inner: str, label: str, within: tuple[str, ...]) -> str:
        """``<a href>`` around the rendered label."""
        return f'<a href="{html.escape(href, quote=True)}">{inner}</a>'

    def strong(self, inner: str, within: tuple[str, ...]) -> str:
        """``<b>`` (not again inside a bold text or a heading, which is bold already)."""
        return inner if "strong" in within or "heading" in within else f"<b>{inner}</b>"

    def emphasis(self, inner: str, within: tuple[str, ...]) -> str:
        """``<i>``."""
        return f"<i>{inner}</i>"

    def strike(self, inner: str, within: tuple[str, ...]) -> str:
        """``<s>``."""
        return f"<s>{inner}</s>"

    def quote(self, inner: str, within: tuple[str, ...]) -> str:
        """``<blockquote>``; Telegram cannot nest them, so a quote inside a quote is its text, and
        a quote of nothing (a ">" alone) is nothing, as a heading of nothing is."""
        return inner if "blockquote" in within or not inner else f"<blockquote>{inner}</blockquote>"


_HTML = TelegramHTML()


def markdown_to_html(markdown: str, own: str = "") -> str:
    """Agent Markdown as Telegram HTML (``parse_mode=HTML``), every byte of model text escaped
    (``own``: this bot's username, when known: its own commands stay tappable)."""
    return (TelegramHTML(own) if own else _HTML).render(markdown)


def plain_text(markdown: str, own: str = "") -> str:
    """The reply as plain text (no parse mode), for when Telegram rejects the HTML."""
    return neutralize_mentions(markdown, own)


def html_to_plain(text: str) -> str:
    """HTML this module produced, as the plain text it shows (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def split_markdown(markdown: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Cut a reply into pieces whose HTML fits ``limit``, between blocks where possible.

    A piece is Markdown that renders alone as it did inside the whole. Blocks are packed as
    they come; a block longer than a message is cut (``_cut_block``). A piece that would show
    nothing (an empty heading, quote or code block: Telegram refuses an empty text) is left out;
    a reply of nothing else is sent as the characters the model wrote.
    """
    pieces = _pack(markdown, limit)
    shown = [piece for piece in pieces if _shows_text(piece)]
    if shown or not markdown.strip():
        return shown or pieces
    literal = _pack(_MARKDOWN_PUNCTUATION.sub(r"\\\g<0>", markdown), limit)
    return [piece for piece in literal if _shows_text(piece)] or literal


def _shows_text(piece: str) -> bool:
    """True when ``piece`` renders to something to read (Telegram refuses a text empty once its
    tags are parsed out, ``<blockquote></blockquote>`` say)."""
    return bool(html_to_plain(markdown_to_html(piece)).strip())


def _pack(markdown: str, limit: int) -> list[str]:
    """The blocks of ``markdown`` packed into pieces whose HTML fits ``limit``."""
    pieces: list[str] = []
    current, size = "", 0
    for block in _HTML.blocks(markdown):
        if current and size + len(block.separator) + len(block.rendered) <= limit:
            current, size = current + block.separator + block.source, size + len(block.separator)
            size += len(block.rendered)
            continue
        if current:
            pieces.append(current)
        current, size = "", 0
        if len(block.rendered) <= limit:
            current, size = block.source, len(block.rendered)
        else:
            pieces.extend(_cut_block(block, limit))
    if current or not pieces:
        pieces.append(current)
    return pieces


def _cut_block(block: Block, limit: int) -> list[str]:
    """A block too long for one message, cut into pieces that fit (``_cut_at`` says where).

    A cut code block (fenced or indented) is fenced again on both sides. A later piece of a
    heading or quote starts with its marker again (``_resumed``), so it keeps its look; of a list
    item, with its text, as the rest of a cut paragraph does. A list item or quote cut inside a
    code block it holds closes the code there; what follows, the code's remaining lines fenced
    first (``cut_in_code``), is split anew.
    """
    pieces: list[str] = []
    text = block.code if block.fence else block.source
    head = ""
    while text:

        def wrap(chunk: str, head: str = head) -> str:
            return f"{block.opening}\n{chunk}\n{block.fence}" if block.fence else head + chunk

        end = _fitting_prefix(text, lambda chunk: len(markdown_to_html(wrap(chunk))), limit)
        cut = end if end == len(text) else _cut_at(text, end, prose=not block.fence)
        cut = cut if block.fence or cut == len(text) else before_closing_run(text, cut, head)
        in_code = None if block.fence or cut == len(text) else _cut_in_code(head, text, cut)
        if in_code is not None:
            return [*pieces, in_code.head, *_pack(in_code.rest, limit)]
        pieces.append(wrap(text[:cut]))
        rest = _rest(text, cut, code=bool(block.fence))
        if not block.fence:
            at = len(head) + len(text) - len(text[cut:].lstrip(" \t\n"))  # where the rest was
            head = _resumed(head + text, at, rest)
        text = rest
    return pieces


def _cut_in_code(head: str, text: str, cut: int) -> CodeCut | None:
    """``cut_in_code`` for the piece ``head + text[:cut]``, when the cut falls inside code (the
    space or line end cut at dropped, as ``_rest`` drops it)."""
    start = cut + 1 if text[cut : cut + 1] in (" ", "\n") else cut
    return cut_in_code(head + text, len(head) + cut, len(head) + start)


def _rest(text: str, cut: int, code: bool) -> str:
    """What is left of ``text`` once ``text[:cut]`` is a piece: the line end or space cut at, and
    blank lines, dropped. Code keeps its indentation; prose loses its leading white space (four
    spaces would start a code block), and, cut inside a line or before a line that goes on a
    paragraph (``code_cut.goes_on_a_paragraph``), starts no heading, quote or list item ("a # b"
    cut before "#" goes on with "\\# b", "a\\n+" cut before "+" with "\\+") nor a code block ("a ```"
    cut before "```" goes on with its backticks escaped, ``code_cut.unwritten_fence``)."""
    rest = text[cut:]
    if code:
        return (rest[1:] if rest.startswith((" ", "\n")) else rest).lstrip("\n")
    kept = rest.lstrip(" \t\n")
    mid_line = "\n" not in rest[: len(rest) - len(kept)] and text[cut - 1 : cut] != "\n"
    run = unwritten_fence(text, kept)
    if run:  # its every character escaped: one alone, the others could open a span or a strike
        return re.sub(r"[`~]", r"\\\g<0>", run) + kept[len(run) :]
    opens = _OPENS_BLOCK.match(kept) if mid_line or goes_on_a_paragraph(text, kept) else None
    if opens is None:
        return kept
    at = opens.start(opens.lastgroup or 0)
    return f"{kept[:at]}\\{kept[at:]}"


def _cut_at(text: str, end: int, prose: bool) -> int:
    """Where to cut ``text``, whose first ``end`` characters fit: at the last line end, else space,
    in the second half of them (never the space after a block's marker), else at ``end``, moved back
    to where a character as shown starts (``graphemes``: an emoji sequence, a flag, a letter and
    its marks stay whole). Prose is not cut inside a character reference (``&nbsp;``) nor between a
    backslash and what it escapes.
    """
    for mark in ("\n", " "):
        at = text.rfind(mark, 0, end + 1)
        if at > end // 2:
            return at
    if not prose:
        return boundary_before(text, end)
    cut = end
    for reference in _REFERENCE.finditer(text, max(cut - 40, 0), cut + 40):
        if reference.start() < cut < reference.end():
            cut = reference.start()
            break
    cut = boundary_before(text, cut)
    head = text[:cut]
    if (len(head) - len(head.rstrip("\\"))) % 2:
        cut = boundary_before(text, cut - 1)
    return cut if cut > 0 else end


def _resumed(source: str, at: int, rest: str) -> str:
    """What the piece going on with ``rest`` (``source`` from ``at``, a cut's far side) starts with:
    the look of what holds that place in ``source`` (``code_cut.held_by``): "> " in a quote
    (unless the rest starts a quote line itself), "# " in the line of a "#" heading. Never a list
    item's bullet or number: another "•" or "3." would be an item that is not there."""
    held = held_by(source, at)
    quote = "> " if "blockquote_open" in held and not rest.startswith(">") else ""
    return quote + ("# " if "heading_open" in held else "")


def _fitting_prefix(text: str, measure: Callable[[str], int], limit: int) -> int:
    """A long prefix length n (at least 1) with ``measure(text[:n]) <= limit``.

    The rendering grows about in proportion to the source, so each probe aims at the length
    that would fill 95% of ``limit`` (halving the known range when the aim falls outside it):
    a few renderings of message-sized prefixes, never of the whole long text. Any prefix past
    90% of the limit is taken; the caller may move the cut back (``_cut_at``) anyway.
    """
    low, high = 1, len(text) + 1  # text[:low] fits (one character always does); text[:high] does not
    probe = min(len(text), limit)
    for _ in range(32):
        size = measure(text[:probe])
        if size <= limit:
            low = probe
            if probe == len(text) or size >= limit * 0.9:
                break
        else:
            high = probe
        if high - low <= 1:
            break
        aim = probe * limit * 0.95 / max(size, 1)
        probe = int(aim) if low < aim < high else (low + high) // 2
        probe = min(max(probe, low + 1), high - 1)
    return low
