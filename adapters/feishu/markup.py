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
    """``text`` with every tag neutralized, so it cannot mention anyone or restyle the card.

    A space is put between a bare URL and CJK text it runs into, or the link would swallow it
    (CJK text that is part of the address, ``…/wiki/中文``, stays in it).
    """
    return _URL_TOKEN.sub(_space_before_prose, text).replace("<", _LT_ENTITY)


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
