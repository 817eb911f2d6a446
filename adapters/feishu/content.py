"""What a Feishu message says: its text, and the files that came with it.

Every message type gets an answer (see "接收消息内容结构" in Feishu's docs): text and rich
text (``post``) become text, with code blocks kept in fences and links as Markdown; images,
files, audio, video and images inside a post become ``Attachment``s whose ``ref``
(``<message_id>/<resource type>/<key>``) lets ``FeishuSender.fetch_resource`` download them
later through the message-resource API; stickers, merged forwards and the rest (locations,
shared chats, …) become attachments that only name what came (no ``ref``), never nothing; sent
alone over an open question, the core never takes one as its answer. A shared task, calendar
event, vote or video call is named with what its content carries (title, time: ``shared_thing``),
a card someone sent with its title and text (``card_content``), their words cut short (anyone's).

Mentions: Feishu writes them as ``@_user_N`` keys resolved through ``message.mentions``. Only
the bot's own mention is removed (wherever it stands); other people stay as ``@name``, and
"@所有人" (the key ``@_all``, which ``mentions`` may leave out) reads "@所有人" in a message written
in Chinese, "@all" otherwise. The bot's mention is known by its open_id: without it (Feishu has
not told it yet) no mention is taken for the bot's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clarigate.agent.protocol import detect_locale
from clarigate.agent.protocol.catalog import unnamed
from clarigate.gateway.boundary import surrogates
from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.boundary.messages import Attachment

from .card_text import ALL_KEY, card_mentions, card_words, user_dsl
from .markup import cut


class MalformedEvent(BadRequest):
    """An event that is signed correctly but does not have the shape Feishu documents (400)."""


#: Resource types of the message-resource API: images are ``image``, everything else ``file``.
IMAGE_RESOURCE = "image"
FILE_RESOURCE = "file"

#: How Feishu's key for "@所有人" (``ALL_KEY``) reads.
_ALL = re.compile(rf"{ALL_KEY}(?![A-Za-z0-9_])")
EVERYONE = {"zh": "@所有人", "en": "@all"}

#: A shared thing's title (a task's, an event's, a vote's) is cut to this many characters, a
#: vote's options to ``OPTION_CHARS`` each and ``MAX_OPTIONS`` in all: anyone's words, a line of
#: them for the agent, not pages.
TITLE_CHARS = 200
OPTION_CHARS = 60
MAX_OPTIONS = 10
#: A received card's title and text are cut to this many characters (its images are left out).
CARD_CHARS = 1000


@dataclass(frozen=True)
class MessageContent:
    """The text of a message and the files it carries."""

    text: str
    attachments: list[Attachment] = field(default_factory=list)


def resource_ref(message_id: str, resource: str, key: str) -> str:
    """The ``Attachment.ref`` of a downloadable resource."""
    return f"{message_id}/{resource}/{key}"


def split_ref(ref: str) -> tuple[str, str, str] | None:
    """``(message_id, resource type, key)`` of a ref made by ``resource_ref``; None otherwise."""
    parts = ref.split("/")
    if len(parts) != 3 or parts[1] not in (IMAGE_RESOURCE, FILE_RESOURCE) or not all(parts):
        return None
    return parts[0], parts[1], parts[2]


def read_content(message: dict[str, Any], bot_open_id: str | None = None) -> MessageContent:
    """The text and attachments of an ``im.message.receive_v1`` message."""
    raw = message.get("content") or "{}"
    if not isinstance(raw, str):
        raise MalformedEvent("message content is not text")
    try:
        content = surrogates.loads(raw)  # a JSON string inside the event: its own escapes
    except (ValueError, RecursionError):
        raise MalformedEvent("message content is not JSON") from None
    if not isinstance(content, dict):
        content = {}
    kind = str(message.get("message_type") or "")
    message_id = str(message.get("message_id") or "")
    if kind == "text":
        found = MessageContent(str(content.get("text") or ""))
    elif kind == "post":
        found = post_content(content, message_id)
    elif kind == "interactive":
        found = card_content(content, message_id, message.get("mentions"))
    else:
        found = other_content(kind, content, message_id)
    text = resolve_mentions(found.text, message.get("mentions"), bot_open_id)
    return MessageContent(text, found.attachments)


def mention_open_id(mention: dict[str, Any]) -> str:
    """The open_id of a ``message.mentions`` entry ("" for "@所有人", whose ids are empty)."""
    ids = mention.get("id")
    return str(ids.get("open_id") or "") if isinstance(ids, dict) else ""


def resolve_mentions(text: str, mentions: Any, bot_open_id: str | None) -> str:
    """``@_user_N`` keys as ``@name``, ``@_all`` as "@所有人" or "@all" (the message's language);
    the bot's own mention removed wherever it stands, when its open_id is known."""
    entries = [m for m in mentions or [] if isinstance(m, dict) and m.get("key") and m["key"] != ALL_KEY]
    names: dict[str, str] = {}
    bot_keys: list[str] = []
    for m in entries:
        key = str(m["key"])
        if bot_open_id and mention_open_id(m) == bot_open_id:
            bot_keys.append(key)
        names[key] = f"@{m.get('name') or ''}"
    text = text.strip()
    for key in bot_keys:  # "@bot do this", "@Bob @bot review": the address, not part of the request
        mention = rf"([ \t]*){re.escape(key)}(?!\d)([ \t]*)"  # "@_user_1" does not start "@_user_10"
        text = re.sub(mention, _between, text)
    everyone = EVERYONE[detect_locale(text)]  # the writer's words, not the names mentioned
    for key in sorted(names, key=len, reverse=True):  # "@_user_10" before "@_user_1"
        text = text.replace(key, names[key])
    return _ALL.sub(everyone, text).strip()


def _between(found: re.Match[str]) -> str:
    """What a removed mention leaves: one space between two words, nothing at a line's edge."""
    return " " if found.group(1) and found.group(2) else ""


def post_content(content: dict[str, Any], message_id: str) -> MessageContent:
    """A rich-text message: title and paragraphs as lines, code blocks fenced, images attached."""
    if "content" not in content:  # sent posts are wrapped by language: {"zh_cn": {...}}
        content = next((v for v in content.values() if isinstance(v, dict)), {})
    lines = [str(content.get("title") or "")]
    attachments: list[Attachment] = []
    for paragraph in content.get("content") or []:
        parts = []
        for node in paragraph if isinstance(paragraph, list) else []:
            if not isinstance(node, dict):
                continue
            piece, attachment = post_node(node, message_id)
            parts.append(piece)
            if attachment is not None:
                attachments.append(attachment)
        lines.append("".join(parts))
    return MessageContent("\n".join(line for line in lines if line.strip()), attachments)


def post_node(node: dict[str, Any], message_id: str) -> tuple[str, Attachment | None]:
    """One element of a post paragraph: its text, and the attachment it is, if any."""
    tag = node.get("tag")
    text = str(node.get("text") or "")
    if tag == "text":
        return text, None
    if tag == "a":
        href = str(node.get("href") or "")
        return (f"[{text}]({href})" if href and text != href else text or href), None
    if tag == "at":  # "@_user_1" keys are resolved with the mentions, like in text messages
        key = str(node.get("user_id") or "")
        if key in (ALL_KEY, "all"):  # "@所有人": Feishu's name for it is left to the message's language
            return ALL_KEY, None
        return (key if key.startswith("@_") else f"@{node.get('user_name') or key}"), None
    if tag == "code_block":
        language = str(node.get("language") or "").lower()
        return f"\n```{language}\n{text.rstrip(chr(10))}\n```\n", None
    if tag == "img" and node.get("image_key"):
        ref = resource_ref(message_id, IMAGE_RESOURCE, str(node["image_key"]))
        return "", Attachment(
            kind="image", name=unnamed("attachment_image"), said="attachment_image", ref=ref
        )
    if tag == "media" and node.get("file_key"):
        ref = resource_ref(message_id, FILE_RESOURCE, str(node["file_key"]))
        said = None if node.get("file_name") else "attachment_video"
        return "", Attachment(
            kind="video", name=str(node.get("file_name") or unnamed("attachment_video")), said=said, ref=ref
        )
    if tag == "emotion":
        return f":{node.get('emoji_type') or 'emoji'}:", None
    if tag == "hr":
        return "\n---\n", None
    return text, None


def other_content(kind: str, content: dict[str, Any], message_id: str) -> MessageContent:
    """Messages that are not text: files as attachments, the rest as a short description."""
    file_key = str(content.get("file_key") or "")
    if kind == "image" and content.get("image_key"):
        ref = resource_ref(message_id, IMAGE_RESOURCE, str(content["image_key"]))
        return MessageContent(
            "", [Attachment(kind="image", name=unnamed("attachment_image"), said="attachment_image", ref=ref)]
        )
    if kind in ("file", "audio", "media") and file_key:
        ref = resource_ref(message_id, FILE_RESOURCE, file_key)
        return MessageContent("", [_file(kind, content, ref)])
    if kind == "sticker":  # the message-resource API cannot download stickers: no ref
        return MessageContent(
            "", [Attachment(kind="sticker", name=unnamed("attachment_sticker"), said="attachment_sticker")]
        )
    if kind == "merge_forward":  # the forwarded messages are not in the event
        return MessageContent("", [Attachment(kind="other", name="forwarded chat history")])
    if kind == "location":  # a place, named like Telegram's: no words of the person's to read
        place = one_line(content.get("name"), TITLE_CHARS)
        return MessageContent("", [Attachment(kind="other", name=f"location {place}".strip())])
    if kind in ("share_chat", "share_user"):
        shared = "shared chat" if kind == "share_chat" else "shared contact"
        return MessageContent("", [Attachment(kind="other", name=shared)])
    thing = shared_thing(kind, content, message_id)
    return MessageContent("", [Attachment(kind="other", name=thing or f"{kind or 'unknown'} message")])


def _file(kind: str, content: dict[str, Any], ref: str) -> Attachment:
    """A file, voice message or video; named by the catalog (``said``) when it has no name."""
    said = None if content.get("file_name") else f"attachment_{_NAMES[kind]}"
    duration = content.get("duration")  # milliseconds, voice messages
    seconds = max(round(duration / 1000), 1) if kind == "audio" and isinstance(duration, int) else None
    if said is None:
        name = str(content["file_name"])
        name += "" if seconds is None else f" ({seconds} s)"
    else:
        name = unnamed(said, seconds=seconds)
    attachment_kind = {"file": "file", "audio": "audio", "media": "video"}[kind]
    return Attachment(kind=attachment_kind, name=name, said=said, seconds=seconds, ref=ref)  # type: ignore[arg-type]


_NAMES = {"file": "file", "audio": "voice", "media": "video"}


def card_content(content: dict[str, Any], message_id: str, mentions: Any) -> MessageContent:
    """A card someone sent (forwarded, say) named with what it says: Feishu gives a received card
    as its title and post-like paragraphs (``{"title", "elements": [[{"tag": "text", …}]]}``);
    anyone's words, cut to a line like a shared thing's, so it never reads as a typed answer.
    A JSON 2.0 card's paragraphs are the "please upgrade" line: the card itself, in ``user_dsl``,
    is read instead (``card_text``), its mentions as names."""
    card = user_dsl(content)
    words = card_words(card) if card is not None else []
    if words:  # its mentions are card markdown's tags: "@Name", "@someone", "@all"
        said = resolve_mentions(card_mentions(" ".join(words), mentions), mentions, None)
    else:
        elements = content.get("elements")
        paragraphs = {
            "title": content.get("title"),
            "content": elements if isinstance(elements, list) else [],
        }
        said = resolve_mentions(post_content(paragraphs, message_id).text, mentions, None)
    return MessageContent("", [Attachment(kind="other", name=_named("card", one_line(said, CARD_CHARS), ""))])


#: What a shared calendar card is, by message type (Feishu's "日程分享/邀请/转让…卡片").
CALENDAR_CARDS = {
    "share_calendar_event": "shared calendar event",
    "calendar": "calendar invitation",
    "general_calendar": "calendar event",
}


def shared_thing(kind: str, content: dict[str, Any], message_id: str) -> str | None:
    """A shared task, calendar event, vote or video call named with its title and time, as Feishu's
    "接收消息内容结构" documents their content (``todo``: ``summary`` as a post, ``due_time``;
    calendar cards: ``summary``, ``start_time``, ``end_time``; ``vote``: ``topic``, ``options``;
    ``video_chat``: ``topic``, ``start_time``; times in ms); None for any other type."""
    if kind == "todo":
        summary = content.get("summary")
        if isinstance(summary, dict):
            summary = post_content(summary, message_id).text
        due = when(content.get("due_time"))
        return _named("task", one_line(summary, TITLE_CHARS), f"due {due}" if due else "")
    if kind in CALENDAR_CARDS:
        start, end = when(content.get("start_time")), when(content.get("end_time"))
        time = f"from {start} to {end}" if start and end else start
        return _named(CALENDAR_CARDS[kind], one_line(content.get("summary"), TITLE_CHARS), time)
    if kind == "vote":
        options: list[Any] = content.get("options") or []
        options = options if isinstance(options, list) else []
        shown = [one_line(o, OPTION_CHARS) for o in options[:MAX_OPTIONS] if isinstance(o, str)]
        more = ", …" if len(options) > MAX_OPTIONS else ""
        listed = f"options: {', '.join(o for o in shown if o)}{more}" if any(shown) else ""
        return _named("vote", one_line(content.get("topic"), TITLE_CHARS), listed)
    if kind == "video_chat":
        start = when(content.get("start_time"))
        return _named(
            "video call", one_line(content.get("topic"), TITLE_CHARS), f"started {start}" if start else ""
        )
    return None


def _named(what: str, title: str, detail: str) -> str:
    """``what: title (detail)``, leaving out what is not there."""
    named = f"{what}: {title}" if title else what
    return f"{named} ({detail})" if detail else named


def one_line(value: Any, limit: int) -> str:
    """Someone's text as one line of at most ``limit`` characters ("" when it is not text)."""
    return cut(" ".join(value.split()), limit) if isinstance(value, str) else ""


def when(value: Any) -> str:
    """A Feishu time (milliseconds since 1970, as a string) as ``2024-03-15 10:40 UTC``; "" when
    it is none."""
    try:
        moment = datetime.fromtimestamp(int(str(value)) / 1000, UTC)
    except (ValueError, OverflowError, OSError):
        return ""
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment.year > 1970 else ""
