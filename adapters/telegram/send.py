"""Bot API calls with retries: flood waits honoured, 5xx and network trouble retried.

Every call the adapter makes goes through ``with_retries`` so nothing is lost to a
429 or a brief outage, and every failure is counted in the platform error metric.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from functools import partial
from typing import Any, TypeVar

from telegram import Bot, InlineKeyboardMarkup, Message, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError, TimedOut
from telegram.warnings import PTBDeprecationWarning

from gateway.messages import Conversation, MessageRef
from gateway.metrics import PLATFORM_API_ERRORS

from .markup import html_to_plain, markdown_to_html, plain_text, split_markdown
from .render import TelegramMessage

log = logging.getLogger(__name__)

PLATFORM = "telegram"
T = TypeVar("T")

MAX_ATTEMPTS = 6
MAX_FLOOD_WAIT = 60.0  # a longer flood wait is Telegram telling us to stop: give up and report


def _count(kind: str) -> None:
    PLATFORM_API_ERRORS.labels(PLATFORM, kind).inc()


async def with_retries(
    call: Callable[[], Awaitable[T]], what: str, backoff: float = 0.5, attempts: int = MAX_ATTEMPTS
) -> T:
    """Run one Bot API call, retrying 429 (after ``retry_after``), 5xx and network errors.

    Client errors (400/403/404) are not retried: the same call would fail again.
    ``attempts=1`` counts the failure without waiting (for calls that are only cosmetic).
    """
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except RetryAfter as exc:
            _count("rate_limited")
            seconds = _retry_seconds(exc)
            if attempt == attempts or seconds > MAX_FLOOD_WAIT:
                raise
            log.warning("telegram %s rate limited, retrying in %.1fs", what, seconds)
            await asyncio.sleep(seconds)
        except BadRequest:
            _count("client_error")
            raise
        except (TimedOut, NetworkError) as exc:
            # PTB raises NetworkError for 5xx answers as well as for transport failures.
            _count(
                "network"
                if isinstance(exc, TimedOut) or "HTTP implementation" in str(exc)
                else "server_error"
            )
            if attempt == attempts:
                raise
            delay = backoff * 2 ** (attempt - 1)
            log.warning("telegram %s failed (%s), retry %d in %.1fs", what, exc, attempt, delay)
            await asyncio.sleep(delay)
        except TelegramError:
            _count("client_error")
            raise
    raise AssertionError("unreachable")


def _retry_seconds(exc: RetryAfter) -> float:
    """The flood wait in seconds (PTB is moving ``retry_after`` from int to timedelta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


def _is_parse_error(exc: BadRequest) -> bool:
    return "parse" in exc.message.lower() and "entit" in exc.message.lower()


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


class TelegramSender:
    """Posts, edits and acknowledges through one ``telegram.Bot``."""

    def __init__(self, bot: Bot) -> None:
        self.bot = bot

    @staticmethod
    def placement(conversation: Conversation) -> dict[str, Any]:
        """Where a message goes: the forum topic, and the message it replies to in a group."""
        target: dict[str, Any] = {"chat_id": int(conversation.chat_id)}
        if conversation.topic and conversation.topic.isdigit():  # forum topics are numeric ids
            target["message_thread_id"] = int(conversation.topic)
        if conversation.reply_to and not conversation.is_direct:
            target["reply_parameters"] = ReplyParameters(
                message_id=int(conversation.reply_to), allow_sending_without_reply=True
            )
        return target

    async def post(self, conversation: Conversation, message: TelegramMessage) -> Message:
        """Send one HTML message; resent as plain text if Telegram cannot parse it."""
        target = self.placement(conversation)

        async def html_call() -> Message:
            return await self.bot.send_message(
                text=message.text, parse_mode=ParseMode.HTML, reply_markup=message.reply_markup, **target
            )

        try:
            return await with_retries(html_call, "sendMessage")
        except BadRequest as exc:
            if not _is_parse_error(exc):
                raise
            log.warning("telegram rejected HTML (%s); sending plain text", exc)
            return await with_retries(
                lambda: self.bot.send_message(
                    text=html_to_plain(message.text), reply_markup=message.reply_markup, **target
                ),
                "sendMessage",
            )

    async def post_markdown(self, conversation: Conversation, markdown: str) -> list[Message]:
        """An agent reply: converted to HTML, split at 4096, each piece resent plain if rejected."""
        target = self.placement(conversation)
        sent: list[Message] = []
        for piece in split_markdown(markdown):
            if not piece.strip():
                continue

            async def html_call(piece: str = piece) -> Message:
                return await self.bot.send_message(
                    text=markdown_to_html(piece), parse_mode=ParseMode.HTML, **target
                )

            try:
                sent.append(await with_retries(html_call, "sendMessage"))
            except BadRequest as exc:
                if not _is_parse_error(exc):
                    raise
                log.warning("telegram rejected HTML (%s); sending plain text", exc)
                sent.append(
                    await with_retries(
                        partial(self.bot.send_message, text=plain_text(piece), **target), "sendMessage"
                    )
                )
        return sent

    async def edit(self, chat_id: str, message_id: str, message: TelegramMessage) -> None:
        """Replace a message's text and keyboard (no keyboard when ``reply_markup`` is None)."""
        # Only inline keyboards can be edited in; a ForceReply message just loses its prompt.
        markup = message.reply_markup if isinstance(message.reply_markup, InlineKeyboardMarkup) else None

        async def call() -> Any:
            return await self.bot.edit_message_text(
                chat_id=int(chat_id),
                message_id=int(message_id),
                text=message.text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )

        try:
            await with_retries(call, "editMessageText")
        except BadRequest as exc:
            if not _not_modified(exc):  # a second edit to the same content is not an error
                raise

    async def answer_callback(self, callback_id: str, text: str | None = None, alert: bool = False) -> None:
        """Acknowledge a button tap (always required), with a short text when it helps."""
        short = text[:200] if text else None
        await with_retries(
            lambda: self.bot.answer_callback_query(callback_id, text=short, show_alert=alert),
            "answerCallbackQuery",
        )

    async def typing(self, conversation: Conversation) -> None:
        """Show "typing…" in the chat (Telegram clears it after about 5 seconds).

        One attempt only: the run waits for this call, and an indicator sent after a
        flood wait or an outage would be stale anyway (the next refresh tries again).
        """
        target = {k: v for k, v in self.placement(conversation).items() if k != "reply_parameters"}
        await with_retries(
            lambda: self.bot.send_chat_action(action=ChatAction.TYPING, **target),
            "sendChatAction",
            attempts=1,
        )


def message_ref(message: Message) -> MessageRef:
    """A reference to a sent message, to edit it later."""
    extra = {"thread": str(message.message_thread_id)} if message.message_thread_id else {}
    return MessageRef(
        platform=PLATFORM, chat_id=str(message.chat_id), message_id=str(message.message_id), extra=extra
    )
