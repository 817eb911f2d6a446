"""The words on a card as its sender wrote it (its "user DSL"), for the agent to read.

A received ``interactive`` message's content is Feishu's projection of the card: its title and
post-like paragraphs. For a card built with card JSON 2.0 that projection is what clients older
than 7.20 show: the title, then "请升级至最新版本客户端，以查看内容" ("please upgrade…") where the
body was. The card itself comes along as a JSON string in ``user_dsl`` (the sender's card, JSON
1.0 or 2.0), as the message APIs return it with ``card_msg_content_type=user_card_content``.

``card_words`` reads it: the header's title and subtitle, then the body's text in order (markdown,
``plain_text``/``lark_md`` texts of divs, notes, buttons, column sets, panels, forms…). Images,
links' targets, callbacks' values and inputs' placeholders are left out: what the card says, not
how it is built. A card sent by template (``{"type": "template", "data": {"template_id", …}}``)
carries its template's id and variables, not its words: none are read, the projection stays.

Card markdown mentions people its own way (Feishu's rich-text syntax: ``<at id=ou_…></at>``,
``<at ids=…,…></at>``, ``<at email=…></at>``, ``<at user_id="…">``, ``<at id=all></at>``), not with
the message's ``@_user_N`` keys: ``card_mentions`` reads them as "@Name" when the event's
``mentions`` names that id, "@someone" / "@某人" otherwise (no raw id or address for the agent),
and everyone as Feishu's key for it, which ``content.resolve_mentions`` reads like a text
message's "@所有人" (words now, never a tag that could mention anyone).
"""

from __future__ import annotations

import re
from typing import Any

from clarigate.agent.protocol import detect_locale
from clarigate.gateway.boundary import surrogates

#: Tags whose ``content`` is words someone wrote.
TEXT_TAGS = frozenset({"plain_text", "lark_md", "markdown", "markdown_v1", "text"})
#: Keys whose values are no words on the card: settings, targets, values sent back, input hints.
SKIPPED = frozenset(
    {"config", "card_link", "behaviors", "value", "url", "multi_url", "placeholder", "confirm",
     "hover_tips", "disabled_tips", "style", "i18n_content", "alt", "icon", "fallback"}
)  # fmt: skip
#: How deep a card's nesting is followed (Feishu allows a few levels; anyone's JSON may not stop).
MAX_DEPTH = 24

#: Feishu's key for "@所有人" (@all) in a text message and a post's ``at`` node.
ALL_KEY = "@_all"
#: A mention in card markdown (or a person's card, ``<person id=…>``), its attributes and what it holds.
_MENTION = re.compile(r"<(at|person)\b([^<>]*)>(?:[^<]*</\1\s*>)?", re.IGNORECASE)
_ATTRIBUTE = re.compile(r"""([\w-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))""")
#: The attributes naming whom a card mentions (``email`` too, which ``mentions`` never names).
_ID_ATTRIBUTES = ("id", "ids", "user_id", "open_id", "union_id", "email")
#: Someone the card mentions whom the event's ``mentions`` does not name.
SOMEONE = {"zh": "@某人", "en": "@someone"}


def user_dsl(content: dict[str, Any]) -> dict[str, Any] | None:
    """The sender's card carried in a received card's ``user_dsl``; None without a readable one."""
    raw = content.get("user_dsl")
    if not isinstance(raw, str) or not raw.strip():
        return None
    try:
        card = surrogates.loads(raw)
    except (ValueError, RecursionError):
        return None
    return card if isinstance(card, dict) else None


def card_words(card: dict[str, Any]) -> list[str]:
    """The pieces of text on a card (JSON 1.0 or 2.0), header first, in the card's order."""
    words: list[str] = []
    _walk(card.get("header"), words, 0)
    _walk(card.get("body"), words, 0)  # JSON 2.0: ``body.elements``
    _walk(card.get("elements"), words, 0)  # JSON 1.0
    by_language = card.get("i18n_elements")  # JSON 1.0 in several languages: one of them
    if isinstance(by_language, dict) and not card.get("elements"):
        _walk(next(iter(by_language.values()), None), words, 0)
    return words


def card_mentions(text: str, mentions: Any) -> str:
    """``text`` (card markdown) with its mentions as words: "@Name" for an id the event's
    ``mentions`` names (open_id, user_id or union_id), ``SOMEONE`` for any other, ``ALL_KEY`` for
    everyone."""
    names: dict[str, str] = {}
    for mention in mentions if isinstance(mentions, list) else []:
        ids = mention.get("id") if isinstance(mention, dict) else None
        if isinstance(ids, dict) and mention.get("name"):
            names.update({str(i): f"@{mention['name']}" for i in ids.values() if i})
    someone = SOMEONE[detect_locale(_MENTION.sub(" ", text))]

    def said(found: re.Match[str]) -> str:
        attributes = {m[0].lower(): m[1] or m[2] or m[3] for m in _ATTRIBUTE.findall(found.group(2))}
        ids = [i.strip() for key in _ID_ATTRIBUTES for i in attributes.get(key, "").split(",") if i.strip()]
        if "all" in ids:
            return ALL_KEY
        return " ".join(names.get(i, someone) for i in ids) or someone

    return _MENTION.sub(said, text)


def _walk(node: Any, words: list[str], depth: int) -> None:
    if depth > MAX_DEPTH:
        return
    if isinstance(node, list):
        for item in node:
            _walk(item, words, depth + 1)
        return
    if not isinstance(node, dict):
        return
    said = _said(node)
    if said:
        words.append(said)
    for key, value in node.items():
        if key not in SKIPPED and isinstance(value, dict | list):
            _walk(value, words, depth + 1)


def _said(node: dict[str, Any]) -> str:
    """A text node's words: its ``content``, else the first of its languages' (``i18n_content``)."""
    if node.get("tag") not in TEXT_TAGS:
        return ""
    content = node.get("content")
    if not (isinstance(content, str) and content.strip()):
        languages = node.get("i18n_content")
        found = languages.values() if isinstance(languages, dict) else ()
        content = next((c for c in found if isinstance(c, str) and c.strip()), "")
    return content.strip() if isinstance(content, str) else ""
