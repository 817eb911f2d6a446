"""Agent Markdown as Telegram HTML: escaping, mention neutralizing, splitting at 4096.

Model text is untrusted: everything is HTML-escaped first and only the small set of
tags Telegram accepts is produced by this converter, so a reply can never inject
markup, ping a user, or open a ``tg://`` link.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable

MAX_MESSAGE_CHARS = 4096

_FENCE = re.compile(r"^\s*```")
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
# Every span body stops at its own delimiter (and a URL at a bracket), so a search
# costs one pass over the line: an unclosed "**" or "[x](" repeated through a long
# line must not make the conversion quadratic and stall the event loop.
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s\[\]]+)\)")
_BOLD = re.compile(
    r"\*\*(\*(?=\S)(?:(?!\*\*\*).)+?(?<=\S)\*)\*\*"  # ***bold italic***: bold around *italic*
    r"|\*\*(?=\S)((?:(?!\*\*).)+?)(?<=\S)\*\*|__(?=\S)((?:(?!__).)+?)(?<=\S)__"
)
_ITALIC = re.compile(
    r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])|(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"
)
_STRIKE = re.compile(r"~~(?=\S)((?:(?!~~).)+?)(?<=\S)~~")
_HEADING = re.compile(r"^#{1,6}\s+(.*)$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+")
# "@name" would notify that user; a word joiner after "@" keeps the text readable
# but stops Telegram from making it a mention. An "@" right after a letter or digit
# (support@example.com, git@github.com:…) is never a mention and stays as is, so
# addresses copy without an invisible character in them.
_MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=\w)")
_BARE_URL = re.compile(r"https?://[^\s<>]+")
_URL_TAIL = "*_~.,;:!?)]"  # not part of a URL at its end: "**https://x.y**", "see https://x.y."
_SAFE_SCHEMES = ("http://", "https://", "mailto:")
_PLACEHOLDER = "\x00{}\x00"


def neutralize_mentions(text: str) -> str:
    """``@name`` (and ``@everyone``, ``@all``…) made inert so model text pings nobody."""
    return _MENTION.sub("@\u2060", text)


def _inline_to_html(text: str) -> str:
    """One line of Markdown inline syntax as Telegram HTML (input not yet escaped)."""
    kept: list[str] = []

    def keep(fragment: str) -> str:
        kept.append(fragment)
        return _PLACEHOLDER.format(len(kept) - 1)

    # Code spans first: their content is literal and must not be formatted further.
    text = _INLINE_CODE.sub(lambda m: keep(f"<code>{html.escape(m.group(1), quote=False)}</code>"), text)

    def link(m: re.Match[str]) -> str:
        label, url = m.group(1), m.group(2)
        if not url.lower().startswith(_SAFE_SCHEMES):
            return m.group(0)
        inner = _format_spans(html.escape(neutralize_mentions(label), quote=False))
        return keep(f'<a href="{html.escape(url, quote=True)}">{inner}</a>')

    text = _LINK.sub(link, text)

    # Bare URLs stay verbatim: "_", "*" and "@" in them are parts of the address.
    def bare_url(m: re.Match[str]) -> str:
        url = m.group(0).rstrip(_URL_TAIL)
        return keep(html.escape(url, quote=False)) + m.group(0)[len(url) :] if url else m.group(0)

    text = _BARE_URL.sub(bare_url, text)
    text = _format_spans(html.escape(neutralize_mentions(text), quote=False))
    return re.sub("\x00(\\d+)\x00", lambda m: kept[int(m.group(1))], text)


_SPANS = ((_BOLD, "b"), (_STRIKE, "s"), (_ITALIC, "i"))


def _format_spans(escaped: str) -> str:
    """Bold, italic and strikethrough on already escaped text.

    The earliest span wins and its inside is formatted on its own, so tags always
    nest and never cross (``**a *b** c*`` cannot produce ``<b>a <i>b</b> c</i>``).
    """
    out: list[str] = []
    pos = 0
    # Each pattern's next match, searched again only once ``pos`` has passed its start
    # (a match found earlier is still the first one at or after ``pos``): one pass per pattern.
    upcoming = {tag: pattern.search(escaped) for pattern, tag in _SPANS}
    while True:
        for pattern, tag in _SPANS:
            known = upcoming[tag]
            if known is not None and known.start() < pos:
                upcoming[tag] = pattern.search(escaped, pos)
        found = [(m, tag) for tag, m in upcoming.items() if m is not None]
        if not found:
            out.append(escaped[pos:])
            return "".join(out)
        match, tag = min(found, key=lambda pair: pair[0].start())
        inner = next(group for group in match.groups() if group is not None)
        out.append(escaped[pos : match.start()])
        out.append(f"<{tag}>{_format_spans(inner)}</{tag}>")
        pos = match.end()


def markdown_to_html(markdown: str) -> str:
    """Agent Markdown as Telegram HTML (``parse_mode=HTML``), every byte of model text escaped."""
    out: list[str] = []
    code: list[str] | None = None
    language = ""
    quote: list[str] = []

    def flush_quote() -> None:
        if quote:
            out.append("<blockquote>" + "\n".join(quote) + "</blockquote>")
            quote.clear()

    for line in markdown.replace("\x00", "").split("\n"):
        if code is not None:
            if _FENCE.match(line):
                out.append(_code_block(code, language))
                code = None
            else:
                code.append(line)
            continue
        if _FENCE.match(line):
            flush_quote()
            code, language = [], line.strip()[3:].strip()
            continue
        if line.startswith(">"):
            quote.append(_inline_to_html(line[1:].lstrip()))
            continue
        flush_quote()
        heading = _HEADING.match(line)
        if heading:
            out.append(f"<b>{_inline_to_html(heading.group(1))}</b>")
            continue
        bullet = _BULLET.match(line)
        if bullet:
            line = bullet.group(1) + "• " + line[bullet.end() :]
        out.append(_inline_to_html(line))
    flush_quote()
    if code is not None:  # an unclosed fence still shows its code
        out.append(_code_block(code, language))
    return "\n".join(out)


def _code_block(lines: list[str], language: str) -> str:
    body = html.escape("\n".join(lines), quote=False)
    if re.fullmatch(r"[\w+#.-]{1,30}", language):
        return f'<pre><code class="language-{language}">{body}</code></pre>'
    return f"<pre>{body}</pre>"


def plain_text(markdown: str) -> str:
    """The reply as plain text (no parse mode), for when Telegram rejects the HTML."""
    return neutralize_mentions(markdown)


def html_to_plain(text: str) -> str:
    """HTML this module produced, as the plain text it shows (tags dropped, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", text))


def split_markdown(markdown: str, limit: int = MAX_MESSAGE_CHARS) -> list[str]:
    """Cut a reply into pieces whose HTML fits ``limit``, at paragraph boundaries where possible.

    Code fences stay whole when they fit; a paragraph longer than a message is cut
    at line, then word boundaries (a cut code block is re-fenced on both sides).
    """
    pieces: list[str] = []
    current, current_size = "", 0
    for block in _blocks(markdown):
        # Blocks convert independently (fences and quotes never span a blank line),
        # so the HTML of joined blocks is their HTML joined by the same blank line.
        size = len(markdown_to_html(block))
        if current and current_size + 2 + size <= limit:
            current, current_size = f"{current}\n\n{block}", current_size + 2 + size
            continue
        if current:
            pieces.append(current)
        current, current_size = "", 0
        if size <= limit:
            current, current_size = block, size
        else:
            pieces.extend(_cut_block(block, limit))
    if current or not pieces:
        pieces.append(current)
    return pieces


def _blocks(markdown: str) -> list[str]:
    """Paragraphs separated by blank lines; a fenced code block counts as one paragraph."""
    blocks: list[str] = []
    lines: list[str] = []
    in_code = False
    for line in markdown.strip("\n").split("\n"):
        if _FENCE.match(line):
            in_code = not in_code
        if not in_code and not line.strip():
            if lines:
                blocks.append("\n".join(lines))
                lines = []
            continue
        lines.append(line)
    if lines:
        blocks.append("\n".join(lines))
    return blocks


def _cut_block(block: str, limit: int) -> list[str]:
    """A too-long paragraph cut into fitting pieces (line, then word, then character cuts)."""
    opener = ""
    body = block
    if _FENCE.match(block):
        first, _, body = block.partition("\n")
        opener = first.strip()
        body = re.sub(r"\n\s*```\s*$", "", body)

    def wrap(chunk: str) -> str:
        return f"{opener}\n{chunk}\n```" if opener else chunk

    def fits(candidate: str) -> bool:
        return len(markdown_to_html(wrap(candidate))) <= limit

    pieces: list[str] = []
    text = body
    while text:
        end = _longest_fitting_prefix(text, fits)
        cut = end
        if end < len(text):
            cut = text.rfind("\n", 0, end + 1)
            cut = cut if cut > 0 else text.rfind(" ", 0, end + 1)
            cut = cut if cut > 0 else end
        pieces.append(wrap(text[:cut]))
        text = text[cut:].lstrip("\n ")
    return pieces


def _longest_fitting_prefix(text: str, fits: Callable[[str], bool]) -> int:
    """The largest n (at least 1) with ``fits(text[:n])``: binary search, HTML length grows with n."""
    if fits(text):
        return len(text)
    low, high = 1, len(text)
    while low + 1 < high:
        middle = (low + high) // 2
        if fits(text[:middle]):
            low = middle
        else:
            high = middle
    return low
