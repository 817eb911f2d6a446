"""What the form wizard says in the chat, beside its message (``forms``): that a form replied to
is closed, that one ended by a photo, file or voice note sent alone took its values nowhere, or
that the photos and files sent with a form's values went nowhere (its answer refused)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from telegram import Message

from clarigate.agent.protocol import ui_text
from clarigate.gateway.boundary.messages import Attachment, Conversation, PendingView
from clarigate.gateway.boundary.port import GatewayPort

from .effects import AfterAck, Effect, posted_note
from .render import TelegramMessage, escape
from .send import TelegramSender


async def note(
    gateway: GatewayPort,
    sender: TelegramSender,
    after_ack: AfterAck,
    conversation: Conversation,
    message: Message,
    words: str,
) -> None:
    """Post ``words`` as a reply to ``message``, after the ack."""
    where = conversation.model_copy(update={"reply_to": str(message.message_id)})
    await after_ack.run(*posted_note(sender, gateway.state, where, TelegramMessage(escape(words))))


async def say_closed(
    gateway: GatewayPort,
    sender: TelegramSender,
    after_ack: AfterAck,
    opened: Any,
    conversation: Conversation,
    message: Message,
    current: PendingView | None,
) -> bool:
    """A reply to a form this person closed: say it is closed, when its question stays open
    (they opened another: with how to open it again) or another form of theirs is open here
    (``current``: the reply is not taken as a value of either). False when the question is
    over and no form of theirs is open: the reply is a message of its own, as a reply to any
    of the bot's messages."""
    view = await gateway.pending_by_token(str(opened.get("token", ""))) if isinstance(opened, dict) else None
    pending = view is not None and view.status == "pending"
    if not pending and current is None:
        return False
    language = view.request.locale if view is not None else current.request.locale if current else "en"
    words = ui_text("form_closed", language)
    if pending:
        words += " " + ui_text("form_reopen", language)
    await note(gateway, sender, after_ack, conversation, message, words)
    return True


def not_used(
    gateway: GatewayPort, sender: TelegramSender, view: PendingView, attachments: Sequence[Attachment]
) -> list[tuple[str, Effect]]:
    """The note, posted once a refused Submit is answered, that the photos and files sent with the
    form's values were not used (the question closed first: answered, expired); none without any."""
    if not attachments:
        return []
    words = TelegramMessage(escape(ui_text("attachment_not_used", view.request.locale)))
    return [posted_note(sender, gateway.state, view.conversation, words)]
