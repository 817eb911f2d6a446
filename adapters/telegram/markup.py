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

from ..markdown import Block, Renderer

MAX_MESSAGE_CHARS = 4096

# "@name" would notify that user; a word joiner after "@" keeps the text readable
# but stops Telegram from making it a mention. An "@" right after a letter or digit
# (support@example.com, git@github.com:…) is never a mention and stays as is, so
# addresses copy without an invisible character in them.
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=\w)")
_LANGUAGE = re.compile(r"[\w+#.-]{1,30}")


def neutralize_mentions(text: str) -> str:
    """``@name`` (and ``@everyone``, ``@all``…) made inert so model text pings nobody."""
    return _MENTION.sub("@\u2060", text)


def _escape(text: str) -> str:
    return html.escape(text, quote=False)


class TelegramHTML(Renderer):
    """Telegram's HTML (``parse_mode=HTML``): only its tags, always nested, every text escaped."""

    def text(self, text: str, within: tuple[str, ...]) -> str:
        """Model text escaped, mentions made inert."""
        return _escape(neutralize_mentions(text))

    def code(self, code: str, within: tuple[str, ...]) -> str:
        """``<code>``: Telegram finds no mention or link inside it."""
        return f"<code>{_escape(code)}</code>"

    def code_block(self, code: str, language: str, within: tuple[str, ...]) -> str:
        """``<pre>``, with the language Telegram highlights when it is a plain name."""
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
        """``<blockquote>``; Telegram cannot nest them, so a quote inside a quote is its text."""
        return inner if "blockquote" in within else f"<blockquote>{inner}</blockquote>"


_HTML = TelegramHTML()


def markdown_to_html(markdown: str) -> str:
    """Agent Markdown as Telegram HTML (``parse_mode=HTML``), every byte of model text escaped."""
    return _HTML.render(markdown)


def plain_text(markdown: str) -> str:
    """The reply as plain text (no parse mode), for when Telegram rejects the HTML."""
    return neutralize_mentions(markdown)


def html_to_plain(text: str) -> str:
    """HTML this module produced, as the plain text it shows (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def split_markdown(markdown: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Cut a reply into pieces whose HTML fits ``limit``, between blocks where possible.

    A piece is Markdown that renders alone as it did inside the whole. Blocks are packed as
    they come; a block longer than a message is cut at line, then word, then character
    boundaries (a cut fenced code block is fenced again on both sides).
    """
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
    """A block too long for one message, cut into pieces that fit."""

    def wrap(chunk: str) -> str:
        return f"{block.opening}\n{chunk}\n{block.fence}" if block.fence else chunk

    def measure(candidate: str) -> int:
        return len(markdown_to_html(wrap(candidate)))

    pieces: list[str] = []
    text = block.code if block.fence else block.source
    while text:
        end = _fitting_prefix(text, measure, limit)
        cut = end
        if end < len(text):
            cut = text.rfind("\n", 0, end + 1)
            cut = cut if cut > 0 else text.rfind(" ", 0, end + 1)
            cut = cut if cut > 0 else end
        pieces.append(wrap(text[:cut]))
        text = text[cut:]
        # Drop the line end or space cut at, and blank lines; a code line keeps its indentation.
        text = text[1:] if text.startswith((" ", "\n")) else text
        text = text.lstrip("\n")
    return pieces


def _fitting_prefix(text: str, measure: Callable[[str], int], limit: int) -> int:
    """A long prefix length n (at least 1) with ``measure(text[:n]) <= limit``.

    The rendering grows about in proportion to the source, so each probe aims at the length
    that would fill 95% of ``limit`` (halving the known range when the aim falls outside it):
    a few renderings of message-sized prefixes, never of the whole long text. Any prefix past
    90% of the limit is taken; the caller moves the cut back to a line end or a space anyway.
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
