"""A thread (话题) under one of the bot's messages in a one-to-one chat: that message's conversation.

Feishu marks a message written in a thread with ``thread_id``; its ``root_id`` is the thread's
root message, and nothing in the event says who wrote that root. A thread the person starts under
their own message is a conversation of its own (``receive.parse_message``). One they start under
a message the bot posted in the chat (a reply, a question card) goes on with the conversation
that message belonged to (the chat's, mostly): the bot notes each message it posts in a
one-to-one chat (``remember_post``), and a thread whose root is one of them is read as that
conversation, its replies going into the thread (``continued``).
"""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, InboundMessage
from clarigate.gateway.boundary.port import AdapterState

log = logging.getLogger(__name__)

#: How long the bot's posts in one-to-one chats are remembered (a thread started later is new).
POST_TTL_SECONDS = 30 * 24 * 3600


def post_key(chat_id: str, message_id: str) -> str:
    """The adapter-state key of the bot's post ``message_id`` in the one-to-one chat ``chat_id``."""
    return f"feishu:p2p-post:{chat_id}:{message_id}"


async def remember_post(state: AdapterState, conversation: Conversation, message_id: str) -> None:
    """Note which conversation the bot's post ``message_id`` (in the chat, not in a thread) of a
    one-to-one chat belongs to: its topic, None for the chat's own."""
    if not conversation.is_direct:
        return
    try:
        await state.set_json(
            post_key(conversation.chat_id, message_id), {"topic": conversation.topic}, POST_TTL_SECONDS
        )
    except Exception as exc:  # the post is out: a note lost only makes a thread under it a new conversation
        log.warning("feishu: could not note post %s in chat %s (%s)", message_id, conversation.chat_id, exc)


async def continued(state: AdapterState, message: InboundMessage) -> InboundMessage:
    """``message`` in the conversation of the bot's post its one-to-one thread is under, replies
    going into that thread; ``message`` as it is when its thread's root is not one of those."""
    where = message.conversation
    if not (where.is_direct and where.topic):
        return message
    post = await state.get_json(post_key(where.chat_id, where.topic))
    if not isinstance(post, dict):
        return message
    topic = post.get("topic")
    conversation = where.model_copy(update={"topic": str(topic) if topic else None, "reply_to": where.topic})
    return message.model_copy(update={"conversation": conversation})
