"""What came with a message besides text: photos, files, voice, stickers, places, stories, games,
invoices, as ``Attachment``.

Nothing is downloaded when a message arrives (that is the ack path): an attachment carries
Telegram's ``file_id`` as its ``ref``, and a worker fetches the bytes later through
``getFile`` (``fetch_file``) when the agent can use them.
"""

from __future__ import annotations

import logging
import warnings
from datetime import timedelta

from telegram import (
    Bot,
    Message,
    MessageOrigin,
    MessageOriginChannel,
    MessageOriginChat,
    MessageOriginHiddenUser,
    MessageOriginUser,
    PhotoSize,
)
from telegram.error import TelegramError
from telegram.warnings import PTBDeprecationWarning

from clarigate.agent.protocol.catalog import unnamed
from clarigate.gateway.boundary.messages import Attachment

from .receive import spelled_text

log = logging.getLogger(__name__)

#: The largest photo size offered to the agent (Telegram sends each photo in several sizes).
PHOTO_MAX_BYTES = 5 * 1024 * 1024
#: ``getFile`` serves files up to 20 MB from the public Bot API.
GET_FILE_MAX_BYTES = 20 * 1024 * 1024


def best_photo(sizes: tuple[PhotoSize, ...], max_bytes: int = PHOTO_MAX_BYTES) -> PhotoSize | None:
    """The largest size of a photo within ``max_bytes`` (the smallest when none fits)."""
    if not sizes:
        return None
    by_area = sorted(sizes, key=lambda s: s.width * s.height)
    fitting = [s for s in by_area if s.file_size is None or s.file_size <= max_bytes]
    return fitting[-1] if fitting else by_area[0]


def attachments_of(message: Message) -> list[Attachment]:
    """Every attachment of a message, as the agent should hear of it."""
    found = [*_pictures_and_files(message), *_sounds(message), *_videos(message)]
    if message.sticker is not None:
        sticker = message.sticker
        found.append(Attachment(kind="sticker", name=f"sticker {sticker.emoji or ''}".strip()))
    found.extend(_shared_things(message))
    found.extend(_telegram_things(message))
    if message.forward_origin is not None and message.story is None:  # a story names its chat
        found.append(_forwarded(message))
    replied = _replied_elsewhere(message)
    return [*found, replied] if replied is not None else found


def _forwarded(message: Message) -> Attachment:
    """A forwarded message's words as the agent reads them, someone else's: ``forwarded message
    from Bob: “…”`` (as a message shared on Slack is), its writer left out when not told."""
    who = _origin_name(message.forward_origin)
    what = f"forwarded message from {who}" if who else "forwarded message"
    text = spelled_text(message).strip()
    return Attachment(kind="other", name=f"{what}: “{text}”" if text else what)


def _replied_elsewhere(message: Message) -> Attachment | None:
    """What a reply to a message of another chat (``external_reply``: "Reply in another chat")
    answers, which the agent could not know otherwise: ``reply to a message from News: “…”``, with
    the part the person quoted (``quote``; Telegram sends no more of that message's text)."""
    if message.external_reply is None:
        return None
    who = _origin_name(message.external_reply.origin)
    what = f"reply to a message from {who}" if who else "reply to a message from another chat"
    quoted = (message.quote.text if message.quote is not None else "").strip()
    return Attachment(kind="other", name=f"{what}: “{quoted}”" if quoted else what)


def _origin_name(origin: MessageOrigin | None) -> str:
    """Who wrote a message forwarded or replied to from elsewhere (``MessageOrigin``), when told."""
    who = ""
    if isinstance(origin, MessageOriginUser) and origin.sender_user is not None:
        who = origin.sender_user.full_name
    elif isinstance(origin, MessageOriginHiddenUser):
        who = origin.sender_user_name or ""
    elif isinstance(origin, MessageOriginChat | MessageOriginChannel):
        chat = origin.sender_chat if isinstance(origin, MessageOriginChat) else origin.chat
        who = (chat.effective_name or "") if chat is not None else ""
        if origin.author_signature:
            who = f"{who} ({origin.author_signature})" if who else origin.author_signature
    return who


def _pictures_and_files(message: Message) -> list[Attachment]:
    """A photo (its best size) and a document (an image when its type says so)."""
    found: list[Attachment] = []
    photo = best_photo(message.photo)
    if photo is not None:
        found.append(
            Attachment(
                kind="image",
                name="photo.jpg",
                mime_type="image/jpeg",
                size=photo.file_size,
                ref=photo.file_id,
            )
        )
    if message.document is not None:
        doc = message.document
        image = (doc.mime_type or "").startswith("image/")
        found.append(
            Attachment(
                kind="image" if image else "file",
                name=doc.file_name or unnamed("attachment_document"),
                said=None if doc.file_name else "attachment_document",
                mime_type=doc.mime_type,
                size=doc.file_size,
                ref=doc.file_id,
            )
        )
    return found


def _sounds(message: Message) -> list[Attachment]:
    """A voice message and an audio file (named for its performer and title when it has no name)."""
    found: list[Attachment] = []
    if message.voice is not None:
        voice, seconds = message.voice, _seconds(message.voice)
        found.append(
            Attachment(
                kind="audio",
                name=unnamed("attachment_voice", seconds=seconds),
                said="attachment_voice",
                seconds=seconds,
                mime_type=voice.mime_type,
                size=voice.file_size,
                ref=voice.file_id,
            )
        )
    if message.audio is not None:
        audio = message.audio
        name = audio.file_name or " – ".join(p for p in (audio.performer, audio.title) if p)
        said = None if name else "attachment_audio"
        found.append(
            Attachment(
                kind="audio",
                name=name or unnamed("attachment_audio"),
                said=said,
                mime_type=audio.mime_type,
                size=audio.file_size,
                ref=audio.file_id,
            )
        )
    return found


def _videos(message: Message) -> list[Attachment]:
    """A video, an animation (a GIF) and a round video message."""
    found: list[Attachment] = []
    for video in (message.video, message.animation):
        if video is not None:
            found.append(
                Attachment(
                    kind="video",
                    name=video.file_name or unnamed("attachment_video"),
                    said=None if video.file_name else "attachment_video",
                    mime_type=video.mime_type,
                    size=video.file_size,
                    ref=video.file_id,
                )
            )
    if message.video_note is not None:
        note = message.video_note
        name = unnamed("attachment_video_note")
        found.append(
            Attachment(
                kind="video", name=name, said="attachment_video_note", size=note.file_size, ref=note.file_id
            )
        )
    return found


def _seconds(media: object) -> int:
    """A duration in whole seconds (PTB is moving ``duration`` from int to timedelta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = getattr(media, "duration", 0)
    return int(value.total_seconds()) if isinstance(value, timedelta) else int(value or 0)


def _shared_things(message: Message) -> list[Attachment]:
    """Places, contacts, polls and dice: described, so such a message is never met with silence.
    A venue (which Telegram sends with its ``location`` too) is named by its title and address."""
    if message.venue is not None:
        venue, place = message.venue, message.venue.location
        where = f"{place.latitude:.5f}, {place.longitude:.5f}"
        return [Attachment(kind="other", name=f"venue {venue.title}, {venue.address} ({where})")]
    if message.location is not None:
        place = message.location
        return [Attachment(kind="other", name=f"location {place.latitude:.5f}, {place.longitude:.5f}")]
    if message.contact is not None:
        contact = message.contact
        return [
            Attachment(kind="other", name=f"contact {contact.first_name} {contact.last_name or ''}".strip())
        ]
    if message.poll is not None:
        return [Attachment(kind="other", name=f"poll: {message.poll.question}")]
    if message.dice is not None:
        return [Attachment(kind="other", name=f"dice {message.dice.emoji} showing {message.dice.value}")]
    return []


def _telegram_things(message: Message) -> list[Attachment]:
    """A forwarded story, a game and an invoice: Telegram's own things, none the agent can open,
    described as the places and polls are (``_shared_things``), so none is met with silence."""
    if message.story is not None:
        chat = message.story.chat
        who = chat.effective_name or (f"@{chat.username}" if chat.username else "")
        return [Attachment(kind="other", name=f"story from {who}" if who else "story")]
    if message.game is not None:
        return [Attachment(kind="other", name=f"game: {message.game.title}")]
    if message.invoice is not None:
        invoice = message.invoice
        price = f"{invoice.total_amount} in the smallest unit of {invoice.currency}"  # 145 USD: $1.45
        return [Attachment(kind="other", name=f"invoice: {invoice.title}, {price}")]
    return []


async def fetch_file(bot: Bot, attachment: Attachment, max_bytes: int) -> bytes | None:
    """The bytes behind an attachment's ``file_id`` (``getFile``, then the download), or None when
    it cannot be had or is larger than ``max_bytes``."""
    if not attachment.ref:
        return None
    limit = min(max_bytes, GET_FILE_MAX_BYTES)
    if attachment.size is not None and attachment.size > limit:
        return None
    try:
        file = await bot.get_file(attachment.ref)
        if file.file_size is not None and file.file_size > limit:
            return None
        data = bytes(await file.download_as_bytearray())
    except TelegramError as exc:
        log.warning("telegram file %s could not be fetched: %s", attachment.name or attachment.kind, exc)
        return None
    return data if len(data) <= limit else None
