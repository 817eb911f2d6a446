"""The Feishu / Lark ``PlatformAdapter``: receive (webhook or long connection), render cards, send."""

from __future__ import annotations

import asyncio
import logging
import uuid

from starlette.routing import BaseRoute

from agent.protocol import ui_text
from gateway.config import FeishuSettings
from gateway.messages import (
    Attachment,
    ClarificationClosed,
    ClarificationOut,
    Conversation,
    ErrorReply,
    MessageRef,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from gateway.port import GatewayPort, PlatformAdapter

from .content import split_ref
from .long_connection import LongConnection
from .names import NameBook
from .receive import PLATFORM, FeishuReceiver
from .render import Card, render_answered, render_clarification, render_notice, render_reply
from .send import FeishuApiError, FeishuSender, build_client
from .webhook import events_route

log = logging.getLogger(__name__)


class FeishuAdapter(PlatformAdapter):
    """Feishu / Lark: interactive cards (JSON 2.0) with buttons, selects and forms."""

    platform = PLATFORM

    def __init__(self, settings: FeishuSettings, gateway: GatewayPort) -> None:
        self.settings = settings
        self.gateway = gateway
        self.sender = FeishuSender(build_client(settings))
        self.receiver = FeishuReceiver(gateway, NameBook(self.sender.user_name))
        self.long_connection = (
            LongConnection(settings, self.receiver) if settings.mode == "long_connection" else None
        )
        self.working = WorkingCards()

    def routes(self) -> list[BaseRoute]:
        """``POST /feishu/events`` in webhook mode; nothing in long connection mode."""
        if self.long_connection is not None:
            return []
        token = (
            self.settings.verification_token.get_secret_value() if self.settings.verification_token else None
        )
        key = self.settings.encrypt_key.get_secret_value() if self.settings.encrypt_key else None
        return [events_route(self.receiver, token, key)]

    async def start(self) -> None:
        """Learn the bot's open_id (to recognise mentions of it) and start the long connection."""
        try:
            self.receiver.bot_open_id = await self.sender.bot_open_id()
        except FeishuApiError as exc:  # not fatal: any mention then counts as a mention of the bot
            log.warning("feishu: cannot read the bot's identity: %s", exc)
        if self.long_connection is not None:
            self.long_connection.start(asyncio.get_running_loop())

    async def connection_up(self) -> bool | None:
        """Long connection mode: whether its thread runs (None in webhook mode: nothing to hold open)."""
        if self.long_connection is None:
            return None
        thread = self.long_connection._thread
        return thread is not None and thread.is_alive()

    async def stop(self) -> None:
        """Close the long connection and the API's connection pool."""
        if self.long_connection is not None:
            await asyncio.to_thread(self.long_connection.stop)
        self.sender.close()

    async def check(self) -> list[str]:
        """Missing credentials, unprotected webhooks, and whether a tenant token can be had."""
        s = self.settings
        problems = []
        if not (s.app_id and s.app_secret):
            return ["FEISHU_APP_ID and FEISHU_APP_SECRET are required"]
        if s.mode == "webhook" and not s.encrypt_key:
            problems.append("FEISHU_ENCRYPT_KEY is unset: webhook requests cannot be signature-checked")
        if s.mode == "webhook" and not s.verification_token:
            problems.append("FEISHU_VERIFICATION_TOKEN is unset: webhook events are not token-checked")
        try:
            await self.sender.bot_open_id()
        except FeishuApiError as exc:
            problems.append(f"Feishu API at {s.domain} refused the app credentials or is unreachable: {exc}")
        return problems

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item as cards; returns the message created, if any."""
        key = getattr(
            item, "delivery_id", None
        )  # the same on every retry of the item (None: progress, closes)
        if isinstance(item, ClarificationOut):
            card = render_clarification(item.request, item.token, item.fallback_text)
            return await self.post(conversation, card, key=key)
        if isinstance(item, ClarificationClosed):
            ref, view = item.view.message_ref, item.view
            if ref is not None:
                who = view.answered_by.user_id if view.answered_by else None
                await self.sender.update_card(
                    ref.message_id, render_answered(view.request, item.answered_line, who)
                )
            return None
        if isinstance(item, TextReply):
            cards = render_reply(item.text)
            refs = [await self.post(conversation, c, key=part_key(key, i)) for i, c in enumerate(cards)]
            return refs[0] if refs else None
        if isinstance(item, ProgressUpdate):
            return await self.progress(conversation, item)
        if isinstance(item, ErrorReply):
            return await self.post(conversation, render_notice(f"⚠️ {item.text}"), key=key)
        return None

    async def fetch_attachment(self, attachment: Attachment, max_bytes: int) -> bytes | None:
        """The bytes of a file or image a person sent, through the message-resource API (size-capped)."""
        where = split_ref(attachment.ref)
        if where is None:  # stickers, merged forwards: nothing Feishu lets a bot download
            return None
        return await self.sender.fetch_resource(*where, max_bytes=max_bytes)

    async def progress(self, conversation: Conversation, item: ProgressUpdate) -> MessageRef | None:
        """A "Working…" card at the start; when the run is done, its first reply takes that card's place."""
        if item.state == "started":
            return await self.post(
                conversation, render_notice(f"⏳ {ui_text('working', item.locale)}"), reuse=False
            )
        if item.ref is not None:
            self.working.put(conversation.thread_key, item.ref)
        return None

    async def post(
        self, conversation: Conversation, card: Card, reuse: bool = True, key: str | None = None
    ) -> MessageRef:
        """Show ``card`` where the conversation's replies go (``key``: Feishu's ``uuid`` for it).

        It replaces the finished "Working…" card when there is one; otherwise it is
        posted in the thread (groups) or the chat (p2p).
        """
        working = self.working.take(conversation.thread_key) if reuse else None
        if working is not None:
            try:
                await self.sender.update_card(working.message_id, card)
                return working
            except FeishuApiError as exc:  # e.g. the card was deleted: post a new message instead
                log.warning("feishu: could not reuse the working card: %s", exc)
        if conversation.reply_to:
            message_id = await self.sender.reply_card(
                conversation.reply_to, card, in_thread=not conversation.is_direct, key=key
            )
        else:
            message_id = await self.sender.post_card(conversation.chat_id, card, key=key)
        return MessageRef(platform=PLATFORM, chat_id=conversation.chat_id, message_id=message_id)


def part_key(key: str | None, index: int) -> str | None:
    """The ``uuid`` of card ``index`` of a reply split over several: the item's own for the first."""
    if key is None or index == 0:
        return key
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{key}/{index}"))


class WorkingCards:
    """Finished "Working…" cards by conversation, waiting for the reply that replaces them.

    In process memory on purpose: the "done" and the replies of one run are sent
    by the same worker, one after the other.
    """

    def __init__(self, limit: int = 1000) -> None:
        self.limit = limit
        self._cards: dict[str, MessageRef] = {}

    def put(self, key: str, ref: MessageRef) -> None:
        """Remember the finished card of conversation ``key`` (oldest dropped beyond ``limit``)."""
        self._cards.pop(key, None)
        self._cards[key] = ref
        while len(self._cards) > self.limit:
            self._cards.pop(next(iter(self._cards)))

    def take(self, key: str) -> MessageRef | None:
        """The card waiting in conversation ``key``, forgotten once taken."""
        return self._cards.pop(key, None)
