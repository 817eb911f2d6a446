"""Which replies Slack shows already: every message the bot posts carries its delivery id.

Each reply, question and error is posted (or edited into the "Working…" message) with message
``metadata``: ``{"event_type": "clarigate_delivery", "event_payload": {"delivery_id": …, "part":
i, "parts": n}}`` (a long reply is several messages). Before a replica sends an item whose
delivery the store cannot prove (a job taken over from a dead worker, a Redis that restarted),
the core asks ``already_delivered``: the thread is read back (``conversations.replies``, or
``conversations.history`` for a conversation without a thread) with ``include_all_metadata``,
from the job's arrival on, and the item counts as shown when its last part is there.

Reading needs the ``*:history`` scopes the manifest asks for; a read Slack refuses (a scope
missing, a DM the bot is not in, a rate limit) is "cannot tell", and the item is sent.
"""

from __future__ import annotations

from typing import Any

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import ClarificationOut, ErrorReply, Outbound, TextReply

from .receive import PLATFORM
from .render import render_reply
from .send import SlackSender

#: The ``event_type`` of the metadata on the bot's messages.
EVENT_TYPE = "clarigate_delivery"
#: Pages of 200 messages read back at most (a busy thread's older part is not read).
MAX_PAGES = 5
#: Seconds read back before the job arrived (clocks of Redis' host and Slack differ a little).
CLOCK_MARGIN = 60.0


def delivery_metadata(delivery_id: str | None, part: int = 0, parts: int = 1) -> dict[str, Any] | None:
    """The metadata posted with part ``part`` of ``parts`` of an item (None without an id)."""
    if not delivery_id:
        return None
    payload = {"delivery_id": delivery_id, "part": part, "parts": parts}
    return {"event_type": EVENT_TYPE, "event_payload": payload}


def last_part(item: Outbound) -> int | None:
    """The index of the item's last message, which shows it was delivered whole; None for what
    cannot be read back (ephemeral notes) or needs no look (a single-part live reply: finishing
    its message again changes nothing)."""
    if not isinstance(item, TextReply | ErrorReply | ClarificationOut) or not item.delivery_id:
        return None
    if isinstance(item, TextReply | ErrorReply) and item.private_to is not None:
        return None
    if not isinstance(item, TextReply):
        return 0
    parts = len(render_reply(item.text))
    if item.live is not None and parts == 1:
        return None
    return parts - 1


async def already_delivered(
    sender: SlackSender, conversation: Conversation, item: Outbound, since: float
) -> MessageRef | bool | None:
    """The message showing ``item``'s last part when the conversation has it (so a question
    found there can still be updated once answered), False when not (``DeliveryFailed`` when
    Slack refuses the read); None when the item cannot be looked for."""
    part = last_part(item)
    if part is None:
        return None
    wanted = getattr(item, "delivery_id", None)
    cursor: str | None = None
    for _ in range(MAX_PAGES):
        page = await sender.read_back(
            conversation.chat_id, conversation.reply_to, since - CLOCK_MARGIN, cursor
        )
        for message in page.get("messages") or []:
            payload = (message.get("metadata") or {}).get("event_payload") or {}
            if payload.get("delivery_id") == wanted and payload.get("part") == part:
                return found_ref(conversation, message)
        cursor = (page.get("response_metadata") or {}).get("next_cursor") or None
        if not page.get("has_more") or not cursor:
            return False
    return False


def found_ref(conversation: Conversation, message: dict[str, Any]) -> MessageRef | bool:
    """The reference of a message read back (True when Slack gave it no ``ts``)."""
    ts = message.get("ts")
    if not ts:
        return True
    thread = conversation.reply_to
    extra = {"thread_ts": thread} if thread else {}
    return MessageRef(platform=PLATFORM, chat_id=conversation.chat_id, message_id=ts, extra=extra)
