"""A thread (话题) under a message the bot posted in the chat: that message's conversation.

Feishu marks a message written in a thread with ``thread_id``; its ``root_id`` is the thread's
root message, and nothing in the event says who wrote that root. A thread the person starts under
their own message is a conversation of its own (``receive.parse_message``). One they start under
a message the bot posted in the chat goes on with the conversation that message belonged to: in a
one-to-one chat every reply and question card (the chat's conversation, mostly); in a group the
post that stood in for a reply Feishu refused (the asker recalled (撤回) the message it answered).
The bot notes each such post (``remember_post``), and a thread whose root is one of them is read
as that conversation, its replies going into the thread (``continued``).
"""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.messages import Conversation, InboundMessage
from clarigate.gateway.boundary.port import AdapterState

log = logging.getLogger(__name__)

#: How long the bot's posts in the chat are remembered (a thread started later is new).
POST_TTL_SECONDS = 30 * 24 * 3600


def post_key(chat_id: str, message_id: str) -> str:
    """The adapter-state key of the bot's post ``message_id`` in the chat ``chat_id`` (named for
    the one-to-one chats it began with: notes made before a group's were kept are read alike)."""
    return f"feishu:p2p-post:{chat_id}:{message_id}"


async def remember_post(state: AdapterState, conversation: Conversation, message_id: str) -> None:
    """Note which conversation the bot's post ``message_id`` (in the chat, not in a thread)
    belongs to: its topic, None for a one-to-one chat's own (a group's has one: a post for no
    conversation, a note under a clicked card, is not noted)."""
    if not (conversation.is_direct or conversation.topic):
        return
    try:
        await state.set_json(
            post_key(conversation.chat_id, message_id), {"topic": conversation.topic}, POST_TTL_SECONDS
        )
    except Exception as exc:  # the post is out: a note lost only makes a thread under it a new conversation
        log.warning("feishu: could not note post %s in chat %s (%s)", message_id, conversation.chat_id, exc)


async def continued(state: AdapterState, message: InboundMessage) -> InboundMessage:
    """``message`` in the conversation of the bot's post its thread is under, replies going into
    that thread; ``message`` as it is when its thread's root is not one of those (or it is in no
    thread: a group's message outside one is its own thread's root)."""
    where = message.conversation
    if not where.topic or (not where.is_direct and where.topic == message.message_id):
        return message
    post = await state.get_json(post_key(where.chat_id, where.topic))
    if not isinstance(post, dict):
        return message
    topic = post.get("topic")
    if not (topic or where.is_direct):
        return message
    conversation = where.model_copy(update={"topic": str(topic) if topic else None, "reply_to": where.topic})
    return message.model_copy(update={"conversation": conversation})
