"""A form answered by typing over several messages: what a refused typed reply gave is kept.

A person told "Replicas: This field is required" after typing ``name: shop`` types the missing
line alone; the fields they gave are kept per (question, person) in the store (``draft_key``),
for no longer than the question is open, and read back under their next typed reply to the same
question (``parse_typed_reply``'s ``kept``). Nothing is shared: another person's lines, or
another question (a newer one, the one asked after a restart) start from nothing, since the key
names both. Who has kept lines of a question is listed beside them (``drafters_key``, with the
same expiry), so that every person's are deleted as soon as the question closes, however it
closes (``forget``, called by ``flow/claim.py``), and never found by scanning the store's keys.
"""

from __future__ import annotations

import time

from clarigate.agent.protocol import TypedReply, ui_text
from clarigate.gateway.boundary.messages import Sender
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord


def draft_key(request_id: str, user_id: str) -> str:
    """The store key of the ``name: value`` texts ``user_id`` gave for form ``request_id``."""
    return f"typed-form:{request_id}:{user_id}"


def drafters_key(request_id: str) -> str:
    """The store key of the list of people (user ids) with kept lines of form ``request_id``."""
    return f"typed-form-people:{request_id}"


class TypedDrafts:
    """The kept ``name: value`` texts of forms being answered by typing."""

    def __init__(self, store: Store) -> None:
        self.store = store

    async def kept(self, record: PendingRecord, sender: Sender) -> dict[str, str]:
        """What ``sender`` gave in earlier refused replies to ``record``'s form (field name ->
        text); empty for a question that is no form (the store is not asked)."""
        if record.request.input_mode != "form":
            return {}
        kept = await self.store.get_json(draft_key(record.request_id, sender.user_id))
        return {k: v for k, v in kept.items() if isinstance(v, str)} if isinstance(kept, dict) else {}

    async def settle(
        self, record: PendingRecord, sender: Sender, typed: TypedReply, before: dict[str, str]
    ) -> str | None:
        """Keep what a refused reply gave (``typed.kept``) and return the line saying so, or
        forget what was kept (``before``) once the reply is an answer or keeps nothing."""
        key = draft_key(record.request_id, sender.user_id)
        if typed.response is None and typed.kept:
            ttl = int(record.expires_at - time.time())
            if ttl < 1:  # the question is past its time: nothing to come back to
                return None
            await self._list_drafter(record, sender, ttl)  # listed first: never a draft unlisted
            await self.store.set_json(key, typed.kept, ttl)
            return self._kept_line(record, typed.kept)
        if before:
            await self.store.delete(key)
        return None

    async def _list_drafter(self, record: PendingRecord, sender: Sender, ttl: int) -> None:
        """Add ``sender`` to the people with kept lines of ``record``'s form (``drafters_key``).

        Read, then written: the typed replies to one question are jobs of its chat thread, which
        run one at a time, so no two people's additions cross."""
        key = drafters_key(record.request_id)
        listed = await self.store.get_json(key)
        people = [str(user) for user in listed] if isinstance(listed, list) else []
        if sender.user_id not in people:
            await self.store.set_json(key, [*people, sender.user_id], ttl)

    async def forget(self, record: PendingRecord) -> None:
        """Delete every person's kept lines of ``record``'s form, and their list: its question is
        closed (answered, cancelled, left with ``/new``, closed by a new message). A question that
        is no form has none (the store is not asked)."""
        if record.request.input_mode != "form":
            return
        key = drafters_key(record.request_id)
        listed = await self.store.get_json(key)
        if not isinstance(listed, list):
            return
        for user in listed:
            await self.store.delete(draft_key(record.request_id, str(user)))
        await self.store.delete(key)

    @staticmethod
    def _kept_line(record: PendingRecord, kept: dict[str, str]) -> str:
        request = record.request
        labels = [f.label for f in request.fields if f.name in kept]
        joined = ("、" if request.locale == "zh" else ", ").join(labels)
        return ui_text("typed_form_kept", request.locale, fields=joined)
