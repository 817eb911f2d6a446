"""What a message's attachments give the agent: its images (fetched, typed) and the names of the rest."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from clarigate.agent.harness import ImageInput
from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.catalog import bracketed, joined, unnamed
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.errors import AttachmentTooLarge
from clarigate.gateway.boundary.messages import Attachment, AttachmentKind, InboundMessage
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.flow.notices import locale_for

# the turn's log name: these lines were the turn's before they moved here, and logs are read by it
log = logging.getLogger("clarigate.gateway.flow.turn")

#: Images of one message shown to the model at most; the rest are named to the person and the agent.
MAX_IMAGES = 4

#: What the agent reads after an image the platform would not give (``Images.not_fetched``).
NOT_FETCHED = " — could not be loaded"

#: What the agent is given of an attachment: an image's pixels, and a file, sound or video with the
#: platform's handle to its bytes. A sticker or the ``other`` kind (a place, a contact, a poll, a
#: shared chat) is only the adapter's name for it: the agent reads that name and nothing more.
PASSED_ON: frozenset[AttachmentKind] = frozenset({"image", "file", "audio", "video"})

#: The leading bytes of image formats, each given to the model as what it is (providers check
#: the declared type; a BMP declared as PNG is a lie some refuse and others misread).
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
    (b"II*\x00", "image/tiff"),
    (b"MM\x00*", "image/tiff"),
)


@dataclass
class Images:
    """The images the model sees, a line for the person about each one it cannot, and the names of
    those past ``MAX_IMAGES`` (never fetched)."""

    shown: list[ImageInput] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)
    #: Those the platform would not give (refused, gone, a network error): the agent is told so.
    not_fetched: list[Attachment] = field(default_factory=list)


async def fetch_images(outbox: Outbox, msg: InboundMessage, cap: int, hint: Locale | None = None) -> Images:
    """The message's images, fetched through its adapter within the size cap ``cap``; one over
    the cap, of no type it can be given as, or that cannot be had at all (the platform refused it,
    it is gone, the network failed) is left out with a line telling the person, and so are those
    past ``MAX_IMAGES``.

    The lines are in the language of the message's words, else ``hint`` (a photo alone says
    nothing: the open question's language, or the person's last request's, as the caller knows).
    """
    images, locale = Images(), locale_for(msg.text, hint)
    if cap <= 0:
        return images
    sent = [a for a in msg.attachments if a.kind == "image"]
    wanted, past = sent[:MAX_IMAGES], sent[MAX_IMAGES:]
    images.left_out = [a.name or a.kind for a in past]  # for the agent, as it reads them
    if past:
        names = shown_names(past, locale)
        images.notes.append(ui_text("images_over_count", locale, count=str(MAX_IMAGES), names=names))
    for attachment in wanted:
        await _fetch_image(outbox, msg, attachment, cap, locale, images)
    if images.not_fetched:  # one line for the message, however many of its images
        names = shown_names(images.not_fetched, locale)
        images.notes.append(ui_text("images_not_fetched", locale, names=names))
    return images


async def _fetch_image(
    outbox: Outbox, msg: InboundMessage, attachment: Attachment, cap: int, locale: Locale, images: Images
) -> None:
    """Add ``attachment`` to ``images``: shown, or left out with a note or as not fetched."""
    name = shown_name(attachment, locale)
    try:
        if (attachment.size or 0) > cap:
            raise AttachmentTooLarge(attachment.size)
        adapter = outbox.adapter_for(msg.conversation.platform)
        data = await adapter.fetch_attachment(attachment, cap)
    except AttachmentTooLarge as exc:
        size = exc.size or attachment.size
        shown = bracketed(megabytes(size), locale) if size else ""
        images.notes.append(ui_text("image_too_big", locale, name=f"{name}{shown}", cap=megabytes(cap)))
        return
    except Exception:
        log.warning("could not fetch image %s", name, exc_info=True)
        data = None
    if not data:
        if attachment.ref:  # one the platform never lets a bot have (no ref) was never promised
            images.not_fetched.append(attachment)
        return
    declared = attachment.mime_type if (attachment.mime_type or "").startswith("image/") else None
    kind = image_type(data) or declared
    if kind is None:
        images.notes.append(ui_text("image_unreadable", locale, name=name))
        return
    images.shown.append(ImageInput(data, kind, attachment.name))


def shown_name(attachment: Attachment, locale: Locale) -> str:
    """An attachment's name as the person reads it: one the adapter gave for want of a name
    (``said``: "voice message (7 s)") in the person's language (``语音消息（7 秒）``)."""
    if attachment.said:
        return unnamed(attachment.said, locale, attachment.seconds)
    return attachment.name or attachment.kind


def shown_names(attachments: list[Attachment], locale: Locale) -> str:
    """``photo.jpg，语音消息（7 秒）``: the names of ``attachments``, joined in ``locale``."""
    return joined((shown_name(a, locale) for a in attachments), locale)


def megabytes(size: int) -> str:
    """A size as people read it: ``5 MB``, ``20.5 MB`` (MiB, as the cap is set)."""
    return f"{size / 2**20:.1f}".removesuffix(".0") + " MB"


def image_type(data: bytes) -> str | None:
    """The image's type read from its first bytes (PNG, JPEG, GIF, WebP, BMP, TIFF); None when
    unknown.

    Platforms do not always say (Feishu's image messages carry no type), and a JPEG sent as
    ``image/png`` is refused by some providers.
    """
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)), None)


def message_text(msg: InboundMessage, text: str | None = None, images: Images | None = None) -> str:
    """What the agent reads: the text (``text``: what the message stands for instead, a typed
    answer's words), and the names of attachments it cannot see; with the ``images`` fetched for
    it, the ones past ``MAX_IMAGES`` said to be left out and those that could not be had said to
    be missing, as the person is told."""
    text = msg.text if text is None else text
    if not msg.attachments:
        return text
    missing = images.not_fetched if images is not None else []
    described = "; ".join(a.describe() + (NOT_FETCHED if a in missing else "") for a in msg.attachments)
    past = images.left_out if images is not None else []
    aside = (
        f"\n(only the first {MAX_IMAGES} images are shown to you; not shown: {', '.join(past)})"
        if past
        else ""
    )
    return f"{text}\n\n(attached: {described}){aside}".strip()


def nothing_to_read(msg: InboundMessage) -> bool:
    """True when ``msg`` has no text and no attachment passed on to the agent (``PASSED_ON``): a
    sticker, a place or a contact sent alone. Over its writer's open question it is no answer and
    closes nothing (``flow.turn``); otherwise it runs, the agent told what came."""
    return not msg.text.strip() and not any(a.kind in PASSED_ON for a in msg.attachments)
