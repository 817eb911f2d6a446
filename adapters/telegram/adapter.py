"""The Telegram adapter: python-telegram-bot's ``Bot`` wired to the gateway.

Receives through the webhook route or a leased long poller, renders with
``render``, sends with ``send``; button taps and form steps live in
``interactions``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re

from starlette.routing import BaseRoute
from telegram import Bot, Message, Update
from telegram.error import InvalidToken, TelegramError
from telegram.request import HTTPXRequest

from gateway.config import TelegramSettings
from gateway.messages import (
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

from .interactions import Interactions
from .polling import ALLOWED_UPDATES, LeasedPoller
from .receive import (
    BotIdentity,
    chain_key,
    conversation_for,
    inbound_message,
    is_command,
    mentions_bot,
    message_text,
    remember_chain,
    replies_to_bot,
    webhook_route,
    without_mention,
)
from .render import TelegramMessage, escape, render_answered, render_clarification
from .send import TelegramSender, message_ref, with_retries

log = logging.getLogger(__name__)

_SECRET_CHARS = re.compile(r"[A-Za-z0-9_-]{1,256}")  # what Telegram accepts as secret_token
TYPING_REFRESH = 4.5  # Telegram shows "typing…" for about 5 seconds per sendChatAction
TYPING_MAX = 300.0  # never type forever if a run's "done" is lost


class TelegramAdapter(PlatformAdapter):
    """Telegram through the Bot API: webhook or leased polling, inline keyboards, form wizards."""

    platform = "telegram"

    def __init__(
        self, settings: TelegramSettings, gateway: GatewayPort, lease_ttl: int = 30, poll_timeout: int = 10
    ) -> None:
        self.settings = settings
        self.gateway = gateway
        token = settings.bot_token.get_secret_value() if settings.bot_token else ""
        self.bot = Bot(
            token or "0:missing",
            base_url=settings.api_url,
            request=HTTPXRequest(connection_pool_size=32),
            get_updates_request=HTTPXRequest(read_timeout=poll_timeout + 10),
        )
        self.sender = TelegramSender(self.bot)
        self.interactions = Interactions(gateway, self.sender)
        self.me: BotIdentity | None = None
        self.poller: LeasedPoller | None = None
        if not settings.webhook_url:
            self.poller = LeasedPoller(self.bot, gateway.state, self.handle_update, lease_ttl, poll_timeout)
        self._typing: dict[str, asyncio.Task[None]] = {}

    # --- lifecycle -----------------------------------------------------------------------------

    def routes(self) -> list[BaseRoute]:
        """``POST /telegram/webhook``; without a configured secret every call is refused (403)."""
        secret = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else None
        return [webhook_route(self.bot, secret, self.handle_update)]

    async def start(self) -> None:
        """Check the token with ``getMe``, then set the webhook or start polling."""
        problems = self._config_problems()
        if problems:
            raise RuntimeError("Telegram: " + "; ".join(problems))
        try:
            await with_retries(self.bot.initialize, "getMe")
        except InvalidToken as exc:
            raise RuntimeError(f"Telegram rejected TELEGRAM_BOT_TOKEN (getMe failed: {exc.message})") from exc
        user = self.bot.bot
        self.me = BotIdentity(id=user.id, username=user.username or "")
        log.info(
            "telegram bot @%s ready (%s)", self.me.username, "webhook" if self.poller is None else "polling"
        )
        if self.settings.webhook_url:
            secret = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else None
            await with_retries(
                lambda: self.bot.set_webhook(
                    self.settings.webhook_url or "", secret_token=secret, allowed_updates=ALLOWED_UPDATES
                ),
                "setWebhook",
            )
        elif self.poller is not None:
            self.poller.start()

    async def stop(self) -> None:
        """Stop polling (handing the lease over), stop typing indicators, close the HTTP client."""
        if self.poller is not None:
            await self.poller.stop()
        for task in self._typing.values():
            task.cancel()
        self._typing.clear()
        with contextlib.suppress(TelegramError):
            await self.bot.shutdown()

    async def check(self) -> list[str]:
        """Configuration and credential problems, for ``doctor``."""
        problems = self._config_problems()
        if not problems:
            try:
                await self.bot.get_me()
            except InvalidToken:
                problems.append("TELEGRAM_BOT_TOKEN is rejected by Telegram (getMe)")
            except TelegramError as exc:
                problems.append(f"Telegram API at {self.settings.api_url} not reachable: {exc}")
        return problems

    def _config_problems(self) -> list[str]:
        problems = []
        if not self.settings.bot_token or not self.settings.bot_token.get_secret_value():
            problems.append("TELEGRAM_BOT_TOKEN is not set")
        secret = self.settings.webhook_secret.get_secret_value() if self.settings.webhook_secret else ""
        if self.settings.webhook_url and not secret:
            problems.append("TELEGRAM_WEBHOOK_SECRET is required in webhook mode")
        elif secret and not _SECRET_CHARS.fullmatch(secret):
            problems.append("TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -")
        return problems

    # --- receiving -----------------------------------------------------------------------------

    async def handle_update(self, update: Update) -> None:
        """One update from the webhook or the poller: a button tap or a message."""
        if update.callback_query is not None:
            await self.interactions.on_callback(update.callback_query)
            return
        message = update.message
        if message is None or message.from_user is None or message.from_user.is_bot:
            return  # edits, channel posts and other bots' messages are not requests
        text = message_text(message)
        if not text.strip():
            return
        me = self.me or await self._identity()
        private = message.chat.type == "private"
        mention = mentions_bot(message, me)
        reply = replies_to_bot(message, me)
        chain = None
        if reply and not private and not message.is_topic_message and message.reply_to_message is not None:
            chain = await self.gateway.state.get_json(
                chain_key(str(message.chat_id), str(message.reply_to_message.message_id))
            )
        conversation = conversation_for(message, chain)
        addressed = private or mention or reply
        # A form in progress takes its person's messages in its own thread: in a group those
        # meant for the bot (not chatter around it), in a forum topic any (the topic is the thread).
        if (
            (addressed or message.is_topic_message)
            and not is_command(message)
            and await self.interactions.on_typed(message, conversation, without_mention(text, me))
        ):
            return
        if not addressed and not (
            message.is_topic_message and await self.gateway.knows_conversation(conversation)
        ):
            return  # group chatter not meant for the bot
        await self.gateway.accept(
            inbound_message(update, message, conversation, without_mention(text, me), addressed)
        )

    async def _identity(self) -> BotIdentity:
        user = await self.bot.get_me()
        self.me = BotIdentity(id=user.id, username=user.username or "")
        return self.me

    # --- sending -------------------------------------------------------------------------------

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item (see ``gateway.messages``)."""
        if isinstance(item, TextReply):
            sent = await self.sender.post_markdown(conversation, item.text)
            for message in sent:
                await remember_chain(self.gateway.state, conversation, str(message.message_id))
            return message_ref(sent[-1]) if sent else None
        if isinstance(item, ClarificationOut):
            return await self._post(conversation, render_clarification(item))
        if isinstance(item, ClarificationClosed):
            ref = item.view.message_ref
            if ref is not None:
                await self.sender.edit(
                    ref.chat_id, ref.message_id, render_answered(item.view.request, item.answered_line)
                )
            return None
        if isinstance(item, ProgressUpdate):
            await self._progress(conversation, item)
            return None
        if isinstance(item, ErrorReply):
            return await self._post(conversation, TelegramMessage(escape(item.text)))
        raise TypeError(f"unknown outbound item {type(item).__name__}")

    async def _post(self, conversation: Conversation, message: TelegramMessage) -> MessageRef:
        sent: Message = await self.sender.post(conversation, message)
        await remember_chain(self.gateway.state, conversation, str(sent.message_id))
        return message_ref(sent)

    async def _progress(self, conversation: Conversation, item: ProgressUpdate) -> None:
        key = conversation.thread_key
        running = self._typing.pop(key, None)
        if running is not None:
            running.cancel()
        if item.state == "started":
            await self._type_once(conversation)
            self._typing[key] = asyncio.create_task(self._keep_typing(conversation))

    async def _type_once(self, conversation: Conversation) -> None:
        try:
            await self.sender.typing(conversation)
        except TelegramError as exc:  # a missing indicator is not worth failing a run
            log.debug("telegram typing failed: %s", exc)

    async def _keep_typing(self, conversation: Conversation) -> None:
        """Repeat "typing…" until the run is done (Telegram clears it after ~5 s)."""
        loop = asyncio.get_running_loop()
        until = loop.time() + TYPING_MAX
        while loop.time() < until:
            await asyncio.sleep(TYPING_REFRESH)
            await self._type_once(conversation)
