"""The reply chain each person takes part in, in a group outside forum topics.

A group's conversations are reply chains (``receive.conversation_for``): a top-level message to
the bot starts one (``/ask@bot …``), a reply to the bot goes on in the one it answers. A command
about a conversation (``/cancel``, ``/status``) written at the top level, not as a reply, would
be a chain of its own with nothing in it; a command never starts a conversation: it is about the
one its writer takes part in there, the chain of their last message to the bot in that chat
(``accept_noted``), as the same command sent as a reply in that chain is. With none known it
stays where it was written (nothing to cancel, nothing going on).
"""

from __future__ import annotations

import logging

from telegram import Message

from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.boundary.port import AdapterState, GatewayPort

from .commands import Command
from .receive import CHAIN_TTL, conversation_for

log = logging.getLogger(__name__)

#: The commands that act on a conversation (the others greet, help, ask or restart).
ABOUT_A_CONVERSATION = frozenset({"cancel", "status"})


def person_key(chat_id: str, user_id: str) -> str:
    """The state key of the reply chain ``user_id`` last wrote to the bot in, in ``chat_id``."""
    return f"person-chain:{chat_id}:{user_id}"


def _chain(conversation: Conversation) -> str | None:
    """The reply chain a group's message is in (None in a private chat or a topic)."""
    topic = conversation.topic or ""
    return topic if not conversation.is_direct and topic.startswith("msg-") else None


async def their_conversation(
    state: AdapterState, message: Message, conversation: Conversation, sender: Sender, command: Command | None
) -> Conversation:
    """Where ``sender``'s ``message``, written in ``conversation``, belongs: there, unless it is a
    command about a conversation that would start a chain of its own (written at the top level):
    then in their reply chain of the chat (the bot's reply still under the command), if any."""
    if command is None or command.name not in ABOUT_A_CONVERSATION:
        return conversation
    if _chain(conversation) != f"msg-{message.message_id}":
        return conversation  # a reply in a chain, a topic, a private chat: that conversation
    chain = await state.get_json(person_key(conversation.chat_id, sender.user_id))
    if not isinstance(chain, str) or not chain:
        return conversation
    return conversation_for(message, chain, conversation.chat_id)


async def accept_noted(gateway: GatewayPort, inbound: InboundMessage, command: Command | None) -> None:
    """Hand ``inbound`` to the gateway; its group reply chain is now its writer's (not for a
    command about a conversation: it goes to theirs, ``their_conversation``, or to none)."""
    await gateway.accept(inbound)
    chain = _chain(inbound.conversation)
    if chain is not None and (command is None or command.name not in ABOUT_A_CONVERSATION):
        key = person_key(inbound.conversation.chat_id, inbound.sender.user_id)
        try:
            await gateway.state.set_json(key, chain, CHAIN_TTL)
        except Exception as exc:  # noqa: BLE001 (the message is accepted; only the note is lost)
            log.warning("noting the reply chain of %s failed: %s", inbound.inbound_id, exc)
