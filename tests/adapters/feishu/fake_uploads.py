"""The fake open API's uploads and the messages that show them (part of ``FakeOpenApi``).

``POST /open-apis/im/v1/images`` (multipart: ``image_type`` "message" or "avatar", ``image``,
10 MB at most) answers an ``image_key``; ``POST /open-apis/im/v1/files`` (``file_type`` one of
opus, mp4, pdf, doc, xls, ppt, stream; ``file_name``; ``file``, 30 MB at most) a ``file_key``.
A missing field is 234001, an empty file 234010, one over the limit 234006; an image past the
documented pixel limits (a GIF over 2000 x 2000, a PNG over 12000 x 12000: to be uploaded as a
file instead) is refused too (its code is not in the documentation: 234011 here). A message of
``msg_type`` "image" / "file" / "media" / "audio" must name a key this app uploaded
(``{"image_key": …}`` / ``{"file_key": …}``), else 230001 "invalid message content"; a file
uploaded as ``mp4`` is sent as "media", one uploaded as ``opus`` as "audio", any other as
"file", else 230055 "The type of file upload does not match the type of message being sent.".
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

IMAGE_LIMIT = 10 * 1024 * 1024
FILE_LIMIT = 30 * 1024 * 1024
FILE_TYPES = {"opus", "mp4", "pdf", "doc", "xls", "ppt", "stream"}
#: The ``msg_type`` a file is sent as, by the ``file_type`` it was uploaded as (any other: "file").
SENT_AS = {"mp4": "media", "opus": "audio"}
#: The message types that show an upload.
UPLOAD_MESSAGES = ("image", "file", "media", "audio")
Answer = tuple[int, dict[str, Any], dict[str, str]]


def form_parts(content_type: str, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    """A multipart/form-data body's parts: name -> (file name, bytes)."""
    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        if isinstance(name, str):
            parts[name] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return parts


def _refused(code: int, msg: str) -> Answer:
    return 400, {"code": code, "msg": msg}, {}


def _over_pixels(image: bytes) -> bool:
    """Whether a GIF is over 2000 x 2000 or a PNG over 12000 x 12000 (read from its header)."""
    if image[:6] in (b"GIF87a", b"GIF89a"):
        width, height = int.from_bytes(image[6:8], "little"), int.from_bytes(image[8:10], "little")
        return width > 2000 or height > 2000
    if image[:8] == b"\x89PNG\r\n\x1a\n":
        width, height = int.from_bytes(image[16:20], "big"), int.from_bytes(image[20:24], "big")
        return width > 12000 or height > 12000
    return False


@dataclass
class Uploads:
    """What the app uploaded (by key) and the image and file messages it sent (by message id)."""

    images: dict[str, bytes] = field(default_factory=dict)
    files: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)  # key -> (type, name, bytes)
    sent: dict[str, tuple[str, str, bytes]] = field(default_factory=dict)  # message id -> (kind, name, bytes)
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    def upload(self, path: str, content_type: str, raw: bytes) -> Answer:
        """``im/v1/images`` or ``im/v1/files``."""
        parts = form_parts(content_type, raw)
        if path.endswith("/images"):
            kind, image = parts.get("image_type", (None, b""))[1].decode(), parts.get("image")
            if kind not in ("message", "avatar") or image is None:
                return _refused(234001, "Invalid request param.")
            if not image[1]:
                return _refused(234010, "File's size can't be 0.")
            if len(image[1]) > IMAGE_LIMIT:
                return _refused(234006, "The file size exceeds the limit.")
            if _over_pixels(image[1]):
                return _refused(234011, "The image resolution exceeds the limit.")
            key = f"img_v3_{next(self._ids):04d}"
            self.images[key] = image[1]
            return 200, {"code": 0, "msg": "success", "data": {"image_key": key}}, {}
        file_type = parts.get("file_type", (None, b""))[1].decode()
        name, upload = parts.get("file_name", (None, b""))[1].decode(), parts.get("file")
        if file_type not in FILE_TYPES or not name or upload is None:
            return _refused(234001, "Invalid request param.")
        if not upload[1]:
            return _refused(234010, "File's size can't be 0.")
        if len(upload[1]) > FILE_LIMIT:
            return _refused(234006, "The file size exceeds the limit.")
        key = f"file_v3_{next(self._ids):04d}"
        self.files[key] = (file_type, name, upload[1])
        return 200, {"code": 0, "msg": "success", "data": {"file_key": key}}, {}

    def refusal(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """Feishu's answer to an image or file message naming no key of this app, else None."""
        try:
            content = json.loads(body["content"])
        except (KeyError, TypeError, ValueError):
            return {"code": 230001, "msg": "invalid message content"}
        if body.get("msg_type") == "image" and content.get("image_key") in self.images:
            return None
        uploaded = self.files.get(content.get("file_key"))
        if body.get("msg_type") == "image" or uploaded is None:
            return {"code": 230001, "msg": "invalid message content"}
        if body.get("msg_type") != SENT_AS.get(uploaded[0], "file"):
            return {
                "code": 230055,
                "msg": "The type of file upload does not match the type of message being sent.",
            }
        return None

    def show(self, message_id: str, body: dict[str, Any]) -> None:
        """Keep what an image or file message shows."""
        content = json.loads(body["content"])
        if body["msg_type"] == "image":
            self.sent[message_id] = ("image", "", self.images[content["image_key"]])
        else:
            _, name, data = self.files[content["file_key"]]
            self.sent[message_id] = (body["msg_type"], name, data)
