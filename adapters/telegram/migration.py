"""Groups upgraded to supergroups: their conversations and open questions carry on.

Telegram gives the supergroup a new chat id and tells of it three ways: a service message
with ``migrate_to_chat_id`` in the old group, one with ``migrate_from_chat_id`` in the new
supergroup, and an error carrying ``migrate_to_chat_id`` (PTB's ``ChatMigrated``) on any
call to the old id. Rather than renaming every key the core keeps for the chat, the old id
stays the conversations' identity: messages from the supergroup are read as the old chat's
(``identity``) and sends to the old chat go to the supergroup (``target``). So threads,
pending questions, reply chains and answer policies continue as they were.
"""

from __future__ import annotations

import logging

from clarigate.gateway.boundary.port import AdapterState

log = logging.getLogger(__name__)

MOVE_TTL = 400 * 24 * 3600  # longer than any conversation or question lives


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
        self._identity[new_chat_id] = identity
        self._target[identity] = self._target[old_chat_id] = new_chat_id
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
            self._identity[chat_id] = stored
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
            self._target[chat_id] = stored
            return stored
        return chat_id
