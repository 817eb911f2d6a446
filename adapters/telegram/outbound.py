"""The Telegram adapter's ``send``: each outbound item as the Bot API calls that show it.

Replies are split at 4096 characters (a piece posted by an earlier attempt is not posted
again), questions and notices posted, a closed question's keyboard edited away, live replies
finished through ``LiveMessages``; "Working…" without streaming is "typing…". Every message
posted joins the conversation's reply chain, so a reply to it stays in the conversation.
"""

from __future__ import annotations

import logging
from typing import Any

from telegram import Message

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import (
    ClarificationClosed,
    ClarificationOut,
    ErrorReply,
    LiveEnd,
    Outbound,
    ProgressUpdate,
    TextReply,
)
from clarigate.gateway.boundary.port import GatewayPort
from clarigate.gateway.boundary.retry import post_each_once

from .chat_action import TypingIndicators
from .ephemeral import EphemeralNotes
from .forms import note_said
from .live import LiveMessages
from .markup import split_markdown
from .receive import remember_chain
from .render import TelegramMessage, escape, feedback_keyboard, render_answered, render_clarification
from .send import TelegramSender, message_ref

# The logger these lines have always been written under (operators' filters name it).
log = logging.getLogger("clarigate.adapters.telegram.adapter")


class TelegramOutbound:
    """Delivers outbound items through ``TelegramSender``, ``LiveMessages`` and "typing…"."""

    def __init__(
        self,
        gateway: GatewayPort,
        sender: TelegramSender,
        live: LiveMessages,
        typing: TypingIndicators,
        notes: EphemeralNotes | None = None,
    ) -> None:
        self.gateway = gateway
        self.sender = sender
        self.live = live
        self.typing = typing
        self.notes = notes  # ephemeral notes to one member of a group, where the Bot API has them

    async def deliver(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Deliver one outbound item; Bot API errors are raised as they come (``TelegramError``).

        A question, or a reply of the agent's, is then the agent's latest message of a private
        chat (``note_said``); the gateway's own lines (a command's answer, a notice) are not."""
        ref = await self._deliver(conversation, item)
        if isinstance(item, ClarificationOut) or (isinstance(item, TextReply) and item.from_agent):
            await note_said(self.gateway.state, conversation, ref)
        return ref

    async def _deliver(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        if (
            isinstance(item, TextReply | ErrorReply)
            and item.private_to is not None
            and not conversation.is_direct
        ):
            return await self._note_privately(conversation, item)
        if isinstance(item, TextReply) and item.live is not None:
            votes = feedback_keyboard(item.feedback.token) if item.feedback is not None else None
            finished = await self.live.finish(conversation, item.text, item.live, item.delivery_id, votes)
            for part in finished:
                await remember_chain(self.gateway.state, conversation, part.message_id, part.chat_id)
            return finished[-1] if finished else None
        if isinstance(item, TextReply):
            return await self._post_reply(conversation, item)
        if isinstance(item, LiveEnd):
            await self.live.end(conversation, item.ref)
            return None
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

    async def _post_reply(self, conversation: Conversation, item: TextReply) -> MessageRef | None:
        """A reply split at 4096 characters, one message per piece; a piece posted by an earlier
        attempt of this delivery is not posted again."""

        pieces = [piece for piece in split_markdown(item.text) if piece.strip()]
        votes = feedback_keyboard(item.feedback.token) if item.feedback is not None else None

        async def post(numbered: tuple[int, str]) -> dict[str, Any]:
            index, piece = numbered
            keyboard = votes if index == len(pieces) - 1 else None  # 👍/👎 under the last piece
            message = await self.sender.post_piece(conversation, piece, keyboard)
            chat_id, message_id = str(message.chat_id), str(message.message_id)
            await remember_chain(self.gateway.state, conversation, message_id, chat_id)
            return message_ref(message).model_dump(mode="json")

        posted = await post_each_once(self.gateway.state, item.delivery_id, list(enumerate(pieces)), post)
        return MessageRef.model_validate(posted[-1]) if posted else None

    async def _note_privately(
        self, conversation: Conversation, item: TextReply | ErrorReply
    ) -> MessageRef | None:
        """A line meant for one person in a group (say, "Only Alice can cancel this question"): an
        ephemeral message only they see, where the Bot API has them (``ephemeral``); else a reply
        to that person's message (the core sends each such note once per question and person)."""
        note = TelegramMessage(escape(item.text))
        if item.private_to is not None and self.notes is not None:
            private = await self.notes.send(conversation, item.private_to.user_id, note)
            if private is not None:
                return private
        return await self._post(conversation, note)

    async def _post(self, conversation: Conversation, message: TelegramMessage) -> MessageRef:
        """Post one message, kept as a link of the conversation's reply chain."""
        sent: Message = await self.sender.post(conversation, message)
        await remember_chain(self.gateway.state, conversation, str(sent.message_id), str(sent.chat_id))
        return message_ref(sent)

    async def _progress(self, conversation: Conversation, item: ProgressUpdate) -> None:
        """ "Working…" without streaming: "typing…" until the run is done."""
        self.typing.stop(conversation)
        if item.state == "started":
            await self.typing.start(conversation)
