"""Files the agent sends, as Feishu shows them: uploaded (``im/v1/images`` for an image up to
10 MB, ``im/v1/files`` for any other file up to 30 MB), then sent as a message of ``msg_type``
``image`` (``{"image_key": …}``) or ``file`` (``{"file_key": …}``; ``media`` for an ``.mp4``,
``audio`` for an ``.opus``: Feishu refuses their uploads in a ``file`` message, 230055) where the
conversation's replies go; an image ``im/v1/images`` refuses (past its pixel limits) is uploaded as a file.
Both uploads go through lark-oapi's own request types (multipart).

Exactly once: the upload's key is remembered (the core's adapter state, under the item's
delivery id) before the message is sent, so a retry sends the same upload instead of uploading
again, and the message carries the delivery id as Feishu's ``uuid`` (one message per uuid within
an hour), so a retry after a lost answer does not show the file twice. A caption is posted
first, as a reply of its own.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
from typing import TYPE_CHECKING, Any

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.boundary.retry import PARTS_TTL

from .outgoing import derived_key, text_content

if TYPE_CHECKING:
    from clarigate.gateway.boundary.port import GatewayPort

    from .outgoing import Destinations, WorkingCards
    from .send import FeishuSender

log = logging.getLogger(__name__)

MAX_IMAGE_BYTES = 10 * 1024 * 1024
MAX_FILE_BYTES = 30 * 1024 * 1024
#: The image types ``im/v1/images`` takes; any other image is sent as a file.
IMAGE_TYPES = {
    "image/jpeg",
    "image/png",
    "image/webp",
    "image/gif",
    "image/tiff",
    "image/bmp",
    "image/x-icon",
}
#: ``file_type`` of ``im/v1/files`` by extension; anything else is "stream".
FILE_TYPES = {
    "pdf": "pdf",
    "doc": "doc",
    "docx": "doc",
    "xls": "xls",
    "xlsx": "xls",
    "ppt": "ppt",
    "pptx": "ppt",
    "mp4": "mp4",
    "opus": "opus",
}


def as_image(item: FileReply) -> bool:
    """Whether Feishu shows ``item`` as an image (else it is sent as a file)."""
    return item.image and item.mime_type in IMAGE_TYPES and item.size <= MAX_IMAGE_BYTES


#: The ``msg_type`` that shows a file by its ``file_type`` (any other: ``file``).
SENT_AS = {"mp4": "media", "opus": "audio"}


def file_type(name: str) -> str:
    """``im/v1/files``' ``file_type`` for a file called ``name``."""
    return FILE_TYPES.get(name.rsplit(".", 1)[-1].lower() if "." in name else "", "stream")


def message_type(kind: str, name: str) -> str:
    """The ``msg_type`` of the message showing an upload of ``kind`` ("image" or "file")."""
    return "image" if kind == "image" else SENT_AS.get(file_type(name), "file")


class FeishuFiles:
    """The adapter's ``file_limit`` and ``send_file`` (mixed into ``FeishuAdapter``)."""

    sender: FeishuSender
    destinations: Destinations
    gateway: GatewayPort
    working: WorkingCards

    def file_limit(self, conversation: Conversation, item: FileReply) -> int:
        """30 MB, ``im/v1/files``' limit (an image past 10 MB is sent as a file)."""
        return MAX_FILE_BYTES

    async def send_file(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        """Upload ``item`` once and send it as an image or file message (its caption before it)."""
        key = item.delivery_id
        state = getattr(self.gateway, "state", None)
        working = self.working.take(conversation.thread_key)
        if working is not None:  # a "Working…" card kept for a reply that did not come (files only)
            with contextlib.suppress(DeliveryFailed):
                await self.sender.delete_message(working.message_id)
        if item.caption.strip():
            content = text_content(item.caption)  # model text: no <at> reaches Feishu
            await self.destinations.deliver(
                conversation, content, derived_key(key, "caption"), msg_type="text"
            )
        remembered = f"file-upload:{key}" if key and state is not None else None
        done: dict[str, Any] = (await state.get_json(remembered) if state and remembered else None) or {}
        if not done.get("key"):
            done = await self._upload(item)
            if state and remembered:
                await state.set_json(remembered, done, PARTS_TTL)
        field = "image_key" if done["type"] == "image" else "file_key"
        content = json.dumps({field: done["key"]})
        return await self.destinations.deliver(conversation, content, key, msg_type=done["type"])

    async def _upload(self, item: FileReply) -> dict[str, str]:
        """A new upload: ``{"type": "image" | "file", "key": …}``. An image ``im/v1/images`` refuses
        for good (past its pixel limits: a GIF over 2000 x 2000, another over 12000 x 12000) is
        uploaded as a file instead, as Feishu's documentation says to."""
        if not as_image(item):
            return await self._upload_as(item, "file")
        try:
            return await self._upload_as(item, "image")
        except DeliveryFailed as exc:
            if not exc.permanent or exc.chat_refused:
                raise
            log.info("feishu: %s not taken as an image (%s): sent as a file", item.name, exc.code or exc)
        return await self._upload_as(item, "file")

    async def _upload_as(self, item: FileReply, kind: str) -> dict[str, str]:
        """Upload ``item`` as ``kind`` (the request is built per attempt: lark-oapi replaces its
        body with the multipart encoder it sends)."""

        def send() -> Any:  # in a worker thread, where lark-oapi may still be loading
            from lark_oapi.api.im.v1 import (
                CreateFileRequest,
                CreateFileRequestBody,
                CreateImageRequest,
                CreateImageRequestBody,
            )

            client = self.sender.client
            if kind == "image":
                body = CreateImageRequestBody.builder().image_type("message").image(io.BytesIO(item.data))
                return client.im.v1.image.create(
                    CreateImageRequest.builder().request_body(body.build()).build()
                )
            upload = CreateFileRequestBody.builder().file_type(file_type(item.name)).file_name(item.name)
            upload = upload.file(io.BytesIO(item.data))
            return client.im.v1.file.create(CreateFileRequest.builder().request_body(upload.build()).build())

        data = await self.sender._call(f"POST /open-apis/im/v1/{kind}s", send)
        found = str(data.get(f"{kind}_key") or "")
        if not found:
            raise DeliveryFailed(f"feishu {kind} upload: no {kind}_key in the answer", permanent=False)
        return {"type": message_type(kind, item.name), "key": found}
