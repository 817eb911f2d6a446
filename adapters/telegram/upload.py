"""Files the agent sends, as Telegram shows them: a photo (``sendPhoto``) or a document
(``sendDocument``), uploaded as multipart through PTB, in the conversation's topic and reply chain.

An image up to 10 MB goes as a photo (Telegram's limit for photos; one Telegram will not take
as a photo, for its dimensions, goes as a document instead), anything else as a document up to
50 MB (the Bot API's upload limit). A caption is 1024 characters at most: a longer one is split,
its first piece under the file and the rest as messages after it; the file and each piece are
posted once per delivery (``post_each_once``), so a retry after a failure of a later piece does
not post the file again.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Message
from telegram.constants import ParseMode
from telegram.error import BadRequest

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import FileReply
from clarigate.gateway.boundary.port import AdapterState
from clarigate.gateway.boundary.retry import post_each_once

from .markup import markdown_to_html, split_markdown
from .receive import remember_chain
from .send import TelegramSender, message_ref

log = logging.getLogger(__name__)

MAX_PHOTO_BYTES = 10 * 1024 * 1024
MAX_DOCUMENT_BYTES = 50 * 1024 * 1024
MAX_CAPTION_CHARS = 1024


def file_limit(item: FileReply) -> int:
    """The largest file Telegram takes from a bot: 50 MB (an image past 10 MB goes as a document)."""
    return MAX_DOCUMENT_BYTES


class TelegramFiles:
    """Sends ``FileReply`` items through ``TelegramSender``'s bot."""

    def __init__(self, sender: TelegramSender, state: AdapterState) -> None:
        self.sender = sender
        self.state = state

    async def send(self, conversation: Conversation, item: FileReply) -> MessageRef | None:
        """The file with the caption's first piece, then the caption's other pieces, each once."""
        pieces = split_markdown(item.caption, MAX_CAPTION_CHARS) if item.caption.strip() else [""]
        parts: list[tuple[str, str]] = [("file", pieces[0])] + [("text", p) for p in pieces[1:] if p.strip()]

        async def post(part: tuple[str, str]) -> dict[str, Any]:
            kind, text = part
            if kind == "file":
                sent = await self._upload(conversation, item, text)
            else:
                sent = await self.sender.post_piece(conversation, text)
            await remember_chain(self.state, conversation, str(sent.message_id), str(sent.chat_id))
            return message_ref(sent).model_dump(mode="json")

        posted = await post_each_once(self.state, item.delivery_id, parts, post, way=":file")
        return MessageRef.model_validate(posted[0]) if posted else None

    async def _upload(self, conversation: Conversation, item: FileReply, caption: str) -> Message:
        """``sendPhoto`` for an image Telegram takes as a photo, else ``sendDocument``."""
        if item.image and item.size <= MAX_PHOTO_BYTES:
            try:
                return await self._send(conversation, item, caption, photo=True)
            except BadRequest as exc:
                if "photo" not in exc.message.lower() and "image" not in exc.message.lower():
                    raise
                log.info("telegram: %s not taken as a photo (%s): sent as a document", item.name, exc.message)
        return await self._send(conversation, item, caption, photo=False)

    async def _send(self, conversation: Conversation, item: FileReply, caption: str, photo: bool) -> Message:
        extra: dict[str, Any] = {}
        if caption:
            extra = {"caption": markdown_to_html(caption), "parse_mode": ParseMode.HTML}
        bot = self.sender.bot

        async def call(chat: int) -> Message:
            place = self.sender.placement(conversation, chat)  # quoting only a message of ``chat``
            if photo:
                return await bot.send_photo(photo=item.data, filename=item.name, **place, **extra)
            return await bot.send_document(document=item.data, filename=item.name, **place, **extra)

        what = "sendPhoto" if photo else "sendDocument"
        sent = await self.sender._to_chat(conversation.chat_id, call, what)
        await self.sender.on_posted(sent)
        return sent
