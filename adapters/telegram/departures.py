"""A member leaving a group (or removed): the service message with ``left_chat_member``, or the
``chat_member`` update (``ChatMemberUpdated``) whose new status is out of the chat.

The core closes the open questions only that person may answer there (``GatewayPort.member_left``),
as their Cancel would, so the group is not held up by them until they expire. Telegram sends the
service message in the ``message`` updates the bot takes (privacy mode included), unless the group
hides join and leave messages (a large supergroup may not send them either); the ``chat_member``
update, asked for (``polling.ALLOWED_UPDATES``), comes only to a bot that is an admin of the group.
Both may come for one departure: the second closes nothing (a closed question is not open).
"""

from __future__ import annotations

from telegram import ChatMember, ChatMemberRestricted, ChatMemberUpdated, Message

from clarigate.agent.who import ChatType
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.port import GatewayPort

from .migration import ChatMoves
from .receive import PLATFORM, conversation_for, sender_of


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


async def on_member_changed(
    gateway: GatewayPort, moves: ChatMoves, changed: ChatMemberUpdated | None
) -> None:
    """A ``chat_member`` update: a person (not a bot) now out of the chat (left, banned, or
    restricted and no longer a member) left it, as ``on_left`` tells; any other change is nothing."""
    if changed is None or not _gone(changed.new_chat_member):
        return
    person = changed.new_chat_member.user
    if person.is_bot:  # this bot's own changes are ``my_chat_member`` (not asked for); other bots ask nothing
        return
    chat = changed.chat
    chat_id = await moves.identity(str(chat.id))
    kind: ChatType = "channel" if chat.type == "channel" else "group"  # or supergroup; every topic of it
    await gateway.member_left(
        Conversation(platform=PLATFORM, chat_id=chat_id, chat_type=kind), sender_of(person)
    )


def _gone(member: ChatMember) -> bool:
    """True when ``member`` is not in the chat: left, banned (``kicked``), or restricted and not a member."""
    if isinstance(member, ChatMemberRestricted):
        return not member.is_member
    return member.status in (ChatMember.LEFT, ChatMember.BANNED)
