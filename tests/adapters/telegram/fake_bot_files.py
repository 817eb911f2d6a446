"""The fake Bot API's file uploads: ``sendPhoto`` and ``sendDocument`` as multipart (part of
``FakeBotApi``).

As Telegram documents them: the file is the multipart part named ``photo`` / ``document``
(none: "there is no photo in the request"), a ``caption`` of 0-1024 characters after entity
parsing ("message caption is too long"; HTML checked as for text), photos up to 10 MB and other
files up to 50 MB (413 "Request Entity Too Large" past them). The message answered carries a
``photo`` array of sizes or a ``document`` with the file's name, type and size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from aiohttp.web_request import FileField

if TYPE_CHECKING:
    from .fake_bot_api import FakeBotApi

FILE_METHODS = {"sendPhoto": "photo", "sendDocument": "document"}
LIMITS = {"sendPhoto": 10 * 1024 * 1024, "sendDocument": 50 * 1024 * 1024}
MAX_CAPTION = 1024


@dataclass
class SentFile:
    """A photo or document the bot sent, as the chat shows it."""

    chat_id: int
    message_id: int
    kind: str  # "photo" | "document"
    name: str
    data: bytes
    caption: str
    mime_type: str


def send_file(fake: FakeBotApi, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """The answer to ``sendPhoto`` / ``sendDocument``: the message sent, or an ``ApiError``."""
    from .fake_bot_api import ApiError, check_html

    chat_id = fake.check_send(params)
    kind = FILE_METHODS[method]
    upload = params.get(kind)
    if not isinstance(upload, FileField):
        raise ApiError(400, f"Bad Request: there is no {kind} in the request")
    data = upload.file.read()
    if len(data) > LIMITS[method]:
        raise ApiError(413, "Request Entity Too Large")
    caption = str(params.get("caption", ""))
    if params.get("parse_mode") == "HTML":
        check_html(caption)
    if len(caption) > MAX_CAPTION:
        raise ApiError(400, "Bad Request: message caption is too long")
    message_id = fake.next_id(chat_id)
    mime_type = upload.content_type or "application/octet-stream"
    fake.sent_files.append(SentFile(chat_id, message_id, kind, upload.filename, data, caption, mime_type))
    fake.messages[(chat_id, message_id)] = (caption, params.get("reply_markup") or "")
    message = fake._message(chat_id, message_id, "", params)
    del message["text"]
    file_id = f"{kind}-{message_id}"
    if kind == "photo":
        size = {"file_id": file_id, "file_unique_id": f"u-{file_id}", "width": 1, "height": 1}
        message["photo"] = [{**size, "file_size": len(data)}]
    else:
        message["document"] = {
            "file_id": file_id,
            "file_unique_id": f"u-{file_id}",
            "file_name": upload.filename,
            "mime_type": mime_type,
            "file_size": len(data),
        }
    if caption:
        message["caption"] = caption
    return message
