"""Groups upgraded to supergroups: their conversations and open questions carry on.

Telegram gives the supergroup a new chat id and tells of it three ways: a service message
with ``migrate_to_chat_id`` in the old group, one with ``migrate_from_chat_id`` in the new
supergroup, and an error carrying ``migrate_to_chat_id`` (PTB's ``ChatMigrated``) on any
call to the old id. Rather than renaming every key the core keeps for the chat, the old id
stays the conversations' identity: messages from the supergroup are read as the old chat's
(``identity``) and sends to the old chat go to the supergroup (``target``). So threads,
pending questions, reply chains and answer policies continue as they were.

Only new messages move. Message ids are numbered per chat (a basic group shares the bot's one
sequence with its private chats, a supergroup has its own), so a message stays where it was
posted: an edit or deletion goes to that chat (``TelegramSender``), and one left in the old group
can no longer be changed (Telegram refuses every call for it). A reply quotes only a message of
the chat it is sent to: ``reply_to`` names the chat of a supergroup message in a conversation
known by the old group's id (``reply_point``). For the same reason a reply chain is noted under
the chat its message is in, with the chat its conversation is known by (``receive.chain_of``): a
conversation keeps the id it began with, even one begun in the supergroup before the bot heard of
the upgrade. A form open in the group goes on in a message posted anew in the supergroup
(``form_message``): the old one can no longer show its steps.
"""

from __future__ import annotations

import logging

from telegram.error import BadRequest

from clarigate.gateway.boundary.port import AdapterState

log = logging.getLogger(__name__)

MOVE_TTL = 400 * 24 * 3600  # longer than any conversation or question lives


class LeftBehind(BadRequest):
    """A call for a message of a group since upgraded: Telegram refuses every call for the old
    chat, so the message can no longer be edited or deleted (refused for good, as when deleted)."""

    def __init__(self, chat_id: str) -> None:
        super().__init__(f"group chat {chat_id} was upgraded to a supergroup chat: its messages stay")


#: Moves remembered in this process at most (per direction); past it, they are read again from
#: the shared state, where they expire with ``MOVE_TTL``.
MAX_REMEMBERED = 10_000


def _remember(known: dict[str, str], key: str, value: str) -> None:
    if len(known) >= MAX_REMEMBERED and key not in known:
        known.clear()  # rare (one entry per upgraded group): start again rather than grow
    known[key] = value


def _from_key(new_chat_id: str) -> str:
    return f"chat-moved-from:{new_chat_id}"


def _to_key(old_chat_id: str) -> str:
    return f"chat-moved-to:{old_chat_id}"


class ChatMoves:
    """The moves this bot has seen, in shared state (and remembered in this process)."""

    def __init__(self, state: AdapterState) -> None:
        self.state = state
        self._identity: dict[str, str] = {}  # new id -> old id
        self._target: dict[str, str] = {}  # old id -> new id

    async def moved(self, old_chat_id: str, new_chat_id: str) -> None:
        """Record that ``old_chat_id`` now lives on as ``new_chat_id`` (safe to repeat)."""
        if self._target.get(old_chat_id) == new_chat_id:
            return
        # a group that was itself the upgrade of an older one keeps the oldest identity
        identity = await self.identity(old_chat_id)
        await self.state.set_json(_from_key(new_chat_id), identity, MOVE_TTL)
        await self.state.set_json(_to_key(identity), new_chat_id, MOVE_TTL)
        _remember(self._identity, new_chat_id, identity)
        _remember(self._target, identity, new_chat_id)
        _remember(self._target, old_chat_id, new_chat_id)
        log.info("telegram group %s was upgraded to supergroup %s", old_chat_id, new_chat_id)

    async def identity(self, chat_id: str) -> str:
        """The id conversations of this chat are known by (the old group's, after an upgrade)."""
        known = self._identity.get(chat_id)
        if known is not None:
            return known
        if not chat_id.startswith("-100"):  # only a supergroup can be the upgrade of a group
            return chat_id
        stored = await self.state.get_json(_from_key(chat_id))
        if isinstance(stored, str) and stored:
            _remember(self._identity, chat_id, stored)
            return stored
        return chat_id

    async def target(self, chat_id: str) -> str:
        """Where messages for ``chat_id`` go now (itself unless it was upgraded).

        Only ids of basic groups (negative, without the ``-100`` supergroup prefix) can have
        moved, so private chats and supergroups cost no lookup.
        """
        if chat_id in self._target:
            return self._target[chat_id]
        if not chat_id.startswith("-") or chat_id.startswith("-100"):
            return chat_id
        stored = await self.state.get_json(_to_key(chat_id))
        if isinstance(stored, str) and stored:
            _remember(self._target, chat_id, stored)
            return stored
        return chat_id


def reply_point(chat_id: str, message_id: str, identity: str) -> str:
    """A conversation's ``reply_to`` for message ``message_id`` of ``chat_id``: the id alone in the
    conversation's own chat (``identity``), else ``<chat>:<id>`` (a supergroup's message in a
    conversation known by the old group's id)."""
    return message_id if chat_id == identity else f"{chat_id}:{message_id}"


def reply_target(reply_to: str, identity: str) -> tuple[str, str]:
    """The chat and the id of the message a conversation's ``reply_to`` names (``reply_point``)."""
    chat_id, _, message_id = reply_to.rpartition(":")
    return chat_id or identity, message_id
