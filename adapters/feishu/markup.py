"""Making untrusted model text safe for Feishu card markdown, and cutting it to size.

Card markdown interprets tags such as ``<at id=all></at>``, ``<at user_id="…">``,
``<font>`` and ``<link>``: model text must never ping everyone or a person, so
every ``<`` becomes the entity Feishu renders as a literal ``<``.
"""

from __future__ import annotations

import re

#: Feishu renders this entity as a plain "<", so tags in model text stay text.
_LT_ENTITY = "&#60;"

#: Replies are split into cards of at most this many characters (cards allow ~30 KB;
#: CJK text is 3 bytes a character, JSON escaping adds a little).
REPLY_CHUNK_CHARS = 4000

_BLANK_RUN = re.compile(r"\n{3,}")

#: A bare URL (ASCII up to the first non-ASCII character) directly followed by CJK text.
#: Feishu's card FAQ: without a space between them the CJK text becomes part of the link.
_URL_BEFORE_CJK = re.compile(
    r"(https?://[!-~]+?)(?=[\u2e80-\u2fff\u3000-\u303f\u3040-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef])"
)


def escape_markdown(text: str) -> str:
    """``text`` with every tag neutralized, so it cannot mention anyone or restyle the card.

    A space is put between a bare URL and CJK text right after it, or the link would swallow it.
    """
    return _URL_BEFORE_CJK.sub(r"\1 ", text).replace("<", _LT_ENTITY)


def preview(text: str) -> str:
    """``text`` for a card's ``summary`` (the chat list's one-line preview, plain text): on one
    line, and no ``<`` left that could read as a tag (it becomes the look-alike ``‹``)."""
    return " ".join(text.split()).replace("<", "\u2039")


def cut(text: str, limit: int) -> str:
    """``text`` shortened to ``limit`` characters, with an ellipsis when something was cut."""
    if len(text) <= limit:
        return text
    return text[: max(limit - 1, 0)] + "…"


def split_reply(text: str, limit: int = REPLY_CHUNK_CHARS) -> list[str]:
    """Split a long reply into chunks of at most ``limit`` characters.

    Cuts prefer a blank line, then a line end, then a space, so paragraphs and
    code lines stay whole when they can.
    """
    text = _BLANK_RUN.sub("\n\n", text.strip())
    if not text:
        return []
    chunks: list[str] = []
    while len(text) > limit:
        window = text[:limit]
        at = max(window.rfind("\n\n"), 0) or max(window.rfind("\n"), 0) or max(window.rfind(" "), 0)
        if at < limit // 2:  # no good break in the second half: cut hard rather than make tiny chunks
            at = limit
        chunks.append(text[:at].rstrip())
        text = text[at:].lstrip()
    if text:
        chunks.append(text)
    return chunks
