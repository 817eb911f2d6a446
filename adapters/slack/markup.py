"""Slack mrkdwn: escaping untrusted text, Markdown conversion, cutting and splitting.

Model text is untrusted: it must never ping a channel or a user, and it must never
smuggle Slack's ``<…>`` control sequences, so every piece of it goes through
``escape_mrkdwn`` (or ``markdown_to_mrkdwn``, which escapes too).
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
ZERO_WIDTH_SPACE = "\u200b"

# Bare "@here" is not a ping for API posts without link_names, but clients and
# future flags vary: break the word so it can never become a broadcast. No word boundary
# is required after it: in "@here大家" the CJK letters count as word characters.
_BROADCAST_WORDS = re.compile(r"@(channel|here|everyone)", re.IGNORECASE)
_LINK = re.compile(r"\[([^\]\n]+)\]\(([^)\s]+)\)")
_BOLD = re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_INLINE_CODE = re.compile(r"`[^`\n]+`")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_BULLET = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_SAFE_SCHEMES = ("http://", "https://", "mailto:")


def escape_mrkdwn(text: str) -> str:
    """Escape ``&``, ``<``, ``>`` and break broadcast words, so text shows exactly as written."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _BROADCAST_WORDS.sub(lambda m: "@" + ZERO_WIDTH_SPACE + m.group(1), escaped)


def cut(text: str, limit: int) -> str:
    """``text`` shortened to at most ``limit`` characters, marked with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)].rstrip() + ELLIPSIS


def cut_escaped(text: str, limit: int) -> str:
    """Escape ``text`` and cut it to ``limit`` without splitting an ``&amp;``-style entity."""
    escaped = escape_mrkdwn(text)
    if len(escaped) <= limit:
        return escaped
    head = escaped[: max(limit - 1, 0)]
    amp = head.rfind("&")
    if amp != -1 and ";" not in head[amp:]:
        head = head[:amp]
    return head.rstrip() + ELLIPSIS


def _convert_inline(line: str) -> str:
    """Convert one line of Markdown (outside code blocks) to escaped mrkdwn."""
    # Code spans are kept verbatim (escaped); the rest is converted around them.
    parts: list[str] = []
    last = 0
    for match in _INLINE_CODE.finditer(line):
        parts.append(_convert_plain(line[last : match.start()]))
        parts.append(escape_mrkdwn(match.group(0)))
        last = match.end()
    parts.append(_convert_plain(line[last:]))
    return "".join(parts)


def _convert_plain(text: str) -> str:
    """Links, bold, italics and strike-through of a code-free piece of text."""
    out: list[str] = []
    last = 0
    for match in _LINK.finditer(text):
        out.append(_emphasis(escape_mrkdwn(text[last : match.start()])))
        label, url = match.group(1), match.group(2)
        if url.lower().startswith(_SAFE_SCHEMES) and "|" not in url:
            out.append(f"<{escape_mrkdwn(url)}|{escape_mrkdwn(label).replace('|', '¦')}>")
        else:
            out.append(escape_mrkdwn(match.group(0)))
        last = match.end()
    out.append(_emphasis(escape_mrkdwn(text[last:])))
    return "".join(out)


def _emphasis(text: str) -> str:
    """Markdown emphasis to mrkdwn: ``*x*``/``_x_`` italics, ``**x**`` bold, ``~~x~~`` strike."""
    text = _ITALIC_STAR.sub(r"_\1_", text)
    text = _BOLD.sub(r"*\2*", text)
    return _STRIKE.sub(r"~\1~", text)


def markdown_to_mrkdwn(markdown: str) -> str:
    """Agent Markdown as Slack mrkdwn: emphasis, code, links, lists, headings; all escaped."""
    lines: list[str] = []
    in_code = False
    for line in markdown.splitlines():
        if line.strip().startswith("```"):
            in_code = not in_code
            lines.append("```")
            continue
        if in_code:
            lines.append(escape_mrkdwn(line))
            continue
        heading = _HEADING.match(line)
        if heading:
            lines.append(f"*{_convert_inline(heading.group(1))}*")
            continue
        bullet = _BULLET.match(line)
        if bullet:
            lines.append(f"{bullet.group(1)}• {_convert_inline(bullet.group(2))}")
            continue
        lines.append(_convert_inline(line))
    if in_code:
        lines.append("```")
    return "\n".join(lines)


def _inside_control(line: str, index: int) -> bool:
    """True when ``index`` falls inside a ``<…>`` link or mention of escaped mrkdwn."""
    return line.rfind("<", 0, index) > line.rfind(">", 0, index)


def _break_at(line: str, room: int) -> tuple[int, int]:
    """Where to break a line longer than ``room``: ``(end of this piece, start of the next)``.

    At the last space in the second half that is not inside a link (the space dropped);
    else at ``room``, moved back so a link or an ``&amp;``-style entity stays whole.
    """
    space = line.rfind(" ", 0, room + 1)
    while space > room // 2:
        if not _inside_control(line, space):
            return space, space + 1
        space = line.rfind(" ", 0, space)
    end = room
    if _inside_control(line, end) and line.rfind("<", 0, end) > 0:
        end = line.rfind("<", 0, end)
    amp = line.rfind("&", 0, end)
    if amp > 0 and end - amp < len("&amp;") and ";" not in line[amp:end]:
        end = amp
    return end, end


def _line_pieces(line: str, room: int) -> list[str]:
    """One line cut into pieces of at most ``room`` characters, between words when possible."""
    pieces: list[str] = []
    while len(line) > room:
        end, start = _break_at(line, room)
        pieces.append(line[:end])
        line = line[start:]
    return [*pieces, line]


def split_mrkdwn(text: str, limit: int) -> list[str]:
    """Split mrkdwn into chunks of at most ``limit`` characters, at line breaks when possible.

    A code block cut in two is closed at the end of one chunk and reopened in the next.
    """
    chunks: list[str] = []
    current: list[str] = []
    size = 0
    in_code = False
    room = limit - 8  # space kept for closing and reopening a code fence

    def flush() -> None:
        nonlocal current, size
        if current:
            body = "\n".join(current)
            chunks.append(body + ("\n```" if in_code else ""))
        current, size = (["```"], 3) if in_code else ([], 0)

    for line in text.split("\n"):
        for piece in _line_pieces(line, room):
            if size + len(piece) + 1 > room and current:
                flush()
            current.append(piece)
            size += len(piece) + 1
        if line.strip() == "```":
            in_code = not in_code
    if current and any(part.strip() for part in current):
        in_code = False
        flush()
    return [chunk for chunk in chunks if chunk.strip() and chunk.strip() != "```\n```"]
