"""Bot API calls: one attempt each, every failure counted and classified for the core.

Every call the adapter makes goes through ``once`` (logged, failures counted in the platform
error metric) and is made once: a reply's failure goes back to the core's delivery as
``DeliveryFailed`` (``delivery_failure``), which retries it by the one policy
(``clarigate.gateway.boundary.retry``), honouring Telegram's flood wait. The few calls made
outside a delivery (start-up, a tap's acknowledgement) are retried by that policy through
``patiently``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, TypeVar

import httpx
from telegram import Bot, InlineKeyboardMarkup, LinkPreviewOptions, Message, ReplyParameters
from telegram.constants import ChatAction, ParseMode
from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    NetworkError,
    RetryAfter,
    TelegramError,
    TimedOut,
)
from telegram.warnings import PTBDeprecationWarning

from clarigate.agent.protocol.graphemes import boundary_before
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import PLATFORM_API_ERRORS

from .markup import html_to_plain, markdown_to_html, plain_text
from .migration import ChatMoves, LeftBehind, reply_target
from .receive import topic_target
from .render import TelegramMessage

log = logging.getLogger(__name__)

PLATFORM = "telegram"
T = TypeVar("T")

MAX_FLOOD_WAIT = 60.0  # a longer flood wait is Telegram telling us to stop: give up and report
#: Calls made while starting (getMe, setWebhook, deleteWebhook): 0.5 s, 1 s, … 8 s apart, six in all.
STARTUP_RETRIES = RetryPolicy(first=0.5, attempts=6, longest_wait=MAX_FLOOD_WAIT)
#: A tap's acknowledgement: twice at most, and no flood wait over 2 s (Telegram drops a query it
#: has not seen answered within seconds).
ACK_RETRIES = RetryPolicy(first=0.5, attempts=2, longest_wait=2.0)
#: No bot text shows a link preview under it: the adapter's ``Defaults`` (drafts take none).
NO_PREVIEW = LinkPreviewOptions(is_disabled=True)
TOPIC_GONE = frozenset({"topic_closed", "topic_deleted", "message thread not found"})


def _count(kind: str) -> None:
    PLATFORM_API_ERRORS.labels(PLATFORM, kind).inc()


async def once(call: Callable[[], Awaitable[T]], what: str, *, log_ok: bool = True) -> T:
    """Make one Bot API call: logged, and any failure counted and raised as PTB raised it
    (``log_ok`` False: its success is the caller's to log, as the poller does for empty polls).

    No retry here: whoever retries does so through ``clarigate.gateway.boundary.retry`` (the
    core's delivery, ``patiently`` below), so one failure costs one call per attempt.
    """
    try:
        result = await call()
    except RetryAfter:
        _count("rate_limited")
        raise
    except BadRequest as exc:
        _count("client_error")
        log_platform_call(PLATFORM, what, f"refused: {exc.message}")
        raise
    except (TimedOut, NetworkError) as exc:
        # PTB raises NetworkError for 5xx answers too: not reaching Telegram has httpx's error behind it
        reached = not isinstance(exc, TimedOut) and not isinstance(exc.__cause__, httpx.HTTPError)
        _count("server_error" if reached and "HTTP implementation" not in str(exc) else "network")
        raise
    except TelegramError as exc:
        _count("client_error")
        log_platform_call(PLATFORM, what, f"refused: {exc.message}")
        raise
    if log_ok:
        log_platform_call(PLATFORM, what, "ok", getattr(result, "message_id", None))
    return result


async def patiently(call: Callable[[], Awaitable[T]], what: str, policy: RetryPolicy = STARTUP_RETRIES) -> T:
    """A Bot API call outside the core's delivery (start-up, a tap's acknowledgement), retried by
    ``policy`` while it fails transiently; the last Bot API error is raised as PTB raised it."""

    async def attempt() -> T:
        try:
            return await once(call, what)
        except TelegramError as exc:
            raise delivery_failure(exc, what) from exc

    def note(attempt_number: int, failure: BaseException, wait: float) -> None:
        log.warning("telegram %s failed (%s), retry %d in %.1fs", what, failure, attempt_number, wait)

    try:
        return await policy.call(attempt, on_retry=note)
    except DeliveryFailed as failure:
        assert isinstance(failure.__cause__, TelegramError)  # noqa: S101 (raised just above)
        raise failure.__cause__ from None


def retry_seconds(exc: RetryAfter) -> float:
    """The flood wait in seconds (PTB is moving ``retry_after`` from int to timedelta)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        wait = exc.retry_after
    return wait.total_seconds() if isinstance(wait, timedelta) else float(wait)


def _is_parse_error(exc: BadRequest) -> bool:
    return "parse" in exc.message.lower() and "entit" in exc.message.lower()


def _not_modified(exc: BadRequest) -> bool:
    return "not modified" in exc.message.lower()


def delivery_failure(exc: TelegramError, what: str) -> DeliveryFailed:
    """A Bot API error as the core's ``DeliveryFailed``: what a retry can fix, and what it cannot.

    Permanent: 403 (the bot was blocked, kicked, or may not write there: the chat refuses the
    bot, ``chat_refused``: nothing else is tried there; so too a 400 for a forum topic closed or
    deleted, ``TOPIC_GONE``), 400 (refused as it is: chat not found, message gone, bad markup), 401/404
    (the token). Transient: flood waits (Telegram's ``retry_after``), timeouts, 5xx, network trouble.
    """
    if isinstance(exc, RetryAfter):
        return DeliveryFailed(
            f"telegram {what}: flood wait", permanent=False, retry_after=retry_seconds(exc), code="429"
        )
    if isinstance(exc, Forbidden | BadRequest):  # a topic gone is the place gone, not the payload wrong
        refused = isinstance(exc, Forbidden) or exc.message.lower() in TOPIC_GONE
        code = "403" if isinstance(exc, Forbidden) else "400"
        return DeliveryFailed(
            f"telegram {what}: {exc.message}", permanent=True, code=code, chat_refused=refused
        )
    if isinstance(exc, InvalidToken):
        return DeliveryFailed(f"telegram {what}: token rejected", permanent=True, code="401")
    if isinstance(exc, ChatMigrated):
        # only when the resend to the new chat failed in turn with this same error
        return DeliveryFailed(f"telegram {what}: chat migrated again", permanent=True, code="400")
    if isinstance(exc, TimedOut | NetworkError):
        return DeliveryFailed(f"telegram {what}: {exc.message}", permanent=False, code="network")
    return DeliveryFailed(f"telegram {what}: {exc.message}", permanent=False, code="error")


Posted = Callable[[Message], Awaitable[None]]


async def _nothing(message: Message) -> None:
    return None


class TelegramSender:
    """Posts, edits and acknowledges through one ``telegram.Bot``.

    Sends to a group that was upgraded go to its supergroup (``ChatMoves``), while an edit or a
    deletion goes to the chat its message is in (``_in_chat``); ``on_posted`` is
    told of every message the bot posts (nothing by default: what the agent said last in a
    private chat is noted where its question, reply or file is delivered, ``forms.note_said``).
    """

    def __init__(self, bot: Bot, moves: ChatMoves, on_posted: Posted = _nothing) -> None:
        self.bot = bot
        self.moves = moves
        self.on_posted = on_posted
        self.own = ""  # this bot's username once getMe told it: its commands stay tappable in a reply

    @staticmethod
    def placement(conversation: Conversation, chat: int | None = None) -> dict[str, Any]:
        """Where a message goes (``chat``, else the conversation's): the forum topic or the person's
        topic of a channel's direct messages chat, and in a group the message it replies to, when
        that is a message of this chat (``reply_target``)."""
        chat_id = int(conversation.chat_id) if chat is None else chat
        target: dict[str, Any] = {"chat_id": chat_id, **topic_target(conversation.topic)}
        if conversation.reply_to and not conversation.is_direct:
            where, message_id = reply_target(conversation.reply_to, conversation.chat_id)
            if where == str(chat_id):  # an old group's message is not quoted in its supergroup
                target["reply_parameters"] = ReplyParameters(
                    message_id=int(message_id), allow_sending_without_reply=True
                )
        return target

    async def _to_chat(self, chat_id: str, call: Callable[[int], Awaitable[T]], what: str) -> T:
        """Run ``call`` once for the chat where ``chat_id`` lives now; once more if it moved
        meanwhile (a call to another chat, not a retry: the first was refused for good)."""
        target = await self.moves.target(chat_id)
        try:
            return await once(lambda: call(int(target)), what)
        except ChatMigrated as exc:
            new_id = str(exc.new_chat_id)
            await self.moves.moved(target, new_id)
            return await once(lambda: call(int(new_id)), what)

    async def _in_chat(self, chat_id: str, call: Callable[[int], Awaitable[T]], what: str) -> T:
        """Run ``call`` once for a message of ``chat_id``, the chat it was posted in: never
        redirected (a supergroup numbers its own messages). One left in a group since upgraded
        can no longer be changed (``LeftBehind``)."""
        try:
            return await once(lambda: call(int(chat_id)), what)
        except ChatMigrated as exc:
            await self.moves.moved(chat_id, str(exc.new_chat_id))
            raise LeftBehind(chat_id) from exc

    async def _send(
        self,
        conversation: Conversation,
        what: str = "sendMessage",
        **params: Any,
    ) -> Message:
        async def call(chat: int) -> Message:
            return await self.bot.send_message(**self.placement(conversation, chat), **params)

        sent = await self._to_chat(conversation.chat_id, call, what)
        await self.on_posted(sent)
        return sent

    async def post(self, conversation: Conversation, message: TelegramMessage) -> Message:
        """Send one HTML message; resent as plain text if Telegram cannot parse it."""
        try:
            return await self._send(
                conversation,
                text=message.text,
                parse_mode=ParseMode.HTML,
                reply_markup=message.reply_markup,
            )
        except BadRequest as exc:
            if not _is_parse_error(exc):
                raise
            log.warning("telegram rejected HTML (%s); sending plain text", exc)
            return await self._send(
                conversation,
                text=html_to_plain(message.text),
                reply_markup=message.reply_markup,
            )

    async def post_piece(
        self, conversation: Conversation, piece: str, keyboard: InlineKeyboardMarkup | None = None
    ) -> Message:
        """One piece of a reply (``split_markdown``) as HTML, with ``keyboard`` under it (👍/👎 under
        the last); resent plain if Telegram cannot parse it."""
        try:
            html = markdown_to_html(piece, self.own)
            return await self._send(conversation, text=html, parse_mode=ParseMode.HTML, reply_markup=keyboard)
        except BadRequest as exc:
            if not _is_parse_error(exc):
                raise
            log.warning("telegram rejected HTML (%s); sending plain text", exc)
            return await self._send(conversation, text=plain_text(piece, self.own), reply_markup=keyboard)

    async def set_keyboard(self, chat_id: str, message_id: str, keyboard: InlineKeyboardMarkup) -> None:
        """Put ``keyboard`` under a message (``editMessageReplyMarkup``); safe to repeat."""

        async def call(chat: int) -> Any:
            return await self.bot.edit_message_reply_markup(
                chat_id=chat, message_id=int(message_id), reply_markup=keyboard
            )

        try:
            await self._in_chat(chat_id, call, "editMessageReplyMarkup")
        except BadRequest as exc:
            if not _not_modified(exc):
                raise

    async def edit(self, chat_id: str, message_id: str, message: TelegramMessage) -> bool:
        """Replace a message's text and keyboard (no keyboard when ``reply_markup`` is None).

        False when the message already showed exactly this ("message is not modified").
        """
        # Only inline keyboards can be edited in; a ForceReply message just loses its prompt.
        markup = message.reply_markup if isinstance(message.reply_markup, InlineKeyboardMarkup) else None

        async def call(chat: int) -> Any:
            return await self.bot.edit_message_text(
                chat_id=chat,
                message_id=int(message_id),
                text=message.text,
                parse_mode=ParseMode.HTML,
                reply_markup=markup,
            )

        try:
            await self._in_chat(chat_id, call, "editMessageText")
        except BadRequest as exc:
            if not _not_modified(exc):  # a second edit to the same content is not an error
                raise
            return False
        return True

    async def edit_markdown(
        self, chat_id: str, message_id: str, piece: str, keyboard: InlineKeyboardMarkup | None = None
    ) -> Message | None:
        """Make a message one piece of a reply (``split_markdown``), with ``keyboard`` or none; edited
        in plain text if Telegram cannot parse the HTML. None when it showed exactly this (safe to
        repeat)."""

        async def edit(text: str, parse_mode: str | None) -> Any:
            async def call(chat: int) -> Any:
                return await self.bot.edit_message_text(
                    chat_id=chat,
                    message_id=int(message_id),
                    text=text,
                    parse_mode=parse_mode,
                    reply_markup=keyboard,
                )

            return await self._in_chat(chat_id, call, "editMessageText")

        try:
            try:
                edited = await edit(markdown_to_html(piece, self.own), ParseMode.HTML)
            except BadRequest as exc:
                if not _is_parse_error(exc):
                    raise
                log.warning("telegram rejected HTML (%s); editing in plain text", exc)
                edited = await edit(plain_text(piece, self.own), None)
        except BadRequest as exc:
            if not _not_modified(exc):
                raise
            return None
        return edited if isinstance(edited, Message) else None

    async def delete(self, chat_id: str, message_id: str) -> bool:
        """Delete one of the bot's messages; False when it is gone already (safe to repeat) or can
        no longer be deleted (left in a group since upgraded)."""

        async def call(chat: int) -> Any:
            return await self.bot.delete_message(chat_id=chat, message_id=int(message_id))

        try:
            await self._in_chat(chat_id, call, "deleteMessage")
        except BadRequest as exc:
            if not isinstance(exc, LeftBehind) and "not found" not in exc.message.lower():
                raise
            return False
        return True

    async def draft(self, conversation: Conversation, draft_id: int, html: str) -> None:
        """Show or update a streamed draft in a private chat (``sendMessageDraft``, HTML).

        One attempt: a live update waits for no flood wait (the next update, or the reply, follows).
        """
        chat_id, place = conversation.chat_id, topic_target(conversation.topic, forum_only=True)

        async def call(chat: int) -> Any:
            return await self.bot.send_message_draft(
                chat_id=chat, draft_id=draft_id, text=html, parse_mode=ParseMode.HTML, **place
            )

        await self._to_chat(chat_id, call, "sendMessageDraft")

    async def answer_callback(self, callback_id: str, text: str | None = None, alert: bool = False) -> None:
        """Acknowledge a button tap (always required), with a short text when it helps.

        Two attempts at most: the tap is acknowledged before anything else happens, so
        this call must never hold the rest back for long.
        """
        short = text[: boundary_before(text, 200, floor=0)] if text else None  # a character whole
        await patiently(
            lambda: self.bot.answer_callback_query(callback_id, text=short, show_alert=alert),
            "answerCallbackQuery",
            ACK_RETRIES,
        )

    async def typing(self, conversation: Conversation) -> None:
        """Show "typing…" in the chat (Telegram clears it after about 5 seconds).

        One attempt only: the run waits for this call, and an indicator sent after a
        flood wait or an outage would be stale anyway (the next refresh tries again).
        """
        chat_id, place = conversation.chat_id, topic_target(conversation.topic, forum_only=True)

        async def call(chat: int) -> Any:
            return await self.bot.send_chat_action(chat_id=chat, action=ChatAction.TYPING, **place)

        await self._to_chat(chat_id, call, "sendChatAction")


def message_ref(message: Message) -> MessageRef:
    """A reference to a sent message, to edit it later."""
    extra = {"thread": str(message.message_thread_id)} if message.message_thread_id else {}
    return MessageRef(
        platform=PLATFORM, chat_id=str(message.chat_id), message_id=str(message.message_id), extra=extra
    )
