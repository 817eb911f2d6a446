"""A member leaving a group (or removed): the service message with ``left_chat_member``.

The core closes the open questions only that person may answer there (``GatewayPort.member_left``),
as their Cancel would, so the group is not held up by them until they expire. Telegram sends the
service message in the ``message`` updates the bot takes (privacy mode included), unless the group
hides join and leave messages; a bot does not take ``chat_member`` updates (``polling.ALLOWED_UPDATES``).
"""

from __future__ import annotations

from telegram import Message

from clarigate.gateway.boundary.port import GatewayPort

from .migration import ChatMoves
from .receive import conversation_for, sender_of


async def on_left(gateway: GatewayPort, moves: ChatMoves, message: Message) -> bool:
    """True when ``message`` tells that a member left (nobody asked anything); a person's open
    questions in the chat (known by the group's id after an upgrade: ``migration``) then close."""
    person = message.left_chat_member
    if person is None:
        return False
    if not person.is_bot:  # this bot removed: nothing to send the closing to
        chat_id = await moves.identity(str(message.chat_id))
        await gateway.member_left(conversation_for(message, None, chat_id), sender_of(person))
    return True
