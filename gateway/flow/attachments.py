"""What a message's attachments give the agent: its images (fetched, typed) and the names of the rest."""

from __future__ import annotations

import logging

from clarigate.agent.harness import ImageInput
from clarigate.gateway.boundary.messages import InboundMessage
from clarigate.gateway.boundary.outbound import Outbox

# the turn's log name: these lines were the turn's before they moved here, and logs are read by it
log = logging.getLogger("clarigate.gateway.flow.turn")

#: Images of one message shown to the model at most.
MAX_IMAGES = 4

#: The leading bytes of the image formats models take (providers check the declared type).
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


async def fetch_images(outbox: Outbox, msg: InboundMessage, cap: int) -> list[ImageInput]:
    """The message's images, fetched through its adapter within the size cap ``cap`` (others are
    described in the text); one that cannot be had is left out, with a log line."""
    wanted = [a for a in msg.attachments if a.kind == "image" and (a.size or 0) <= cap][:MAX_IMAGES]
    if not wanted or cap <= 0:
        return []
    images = []
    for attachment in wanted:
        try:
            adapter = outbox.adapter_for(msg.conversation.platform)
            data = await adapter.fetch_attachment(attachment, cap)
        except Exception:
            log.warning("could not fetch image %s", attachment.name or attachment.kind, exc_info=True)
            continue
        if data:
            kind = image_type(data) or attachment.mime_type or "image/png"
            images.append(ImageInput(data, kind, attachment.name))
    return images


def image_type(data: bytes) -> str | None:
    """The image's type read from its first bytes (PNG, JPEG, GIF, WebP); None when unknown.

    Platforms do not always say (Feishu's image messages carry no type), and a JPEG sent as
    ``image/png`` is refused by some providers.
    """
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)), None)


def message_text(msg: InboundMessage) -> str:
    """What the agent reads: the text, and the names of attachments it cannot see."""
    if not msg.attachments:
        return msg.text
    described = "; ".join(a.describe() for a in msg.attachments)
    return f"{msg.text}\n\n(attached: {described})".strip()
