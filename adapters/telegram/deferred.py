"""Edits a flood wait put off, recorded in the shared state so any replica makes them.

A question answered by a tap is edited to "✅ Answered by …" after the tap is acknowledged
(``effects``). When Telegram answers that edit with a flood wait, the edit waits in this
replica's background; if the replica stops meanwhile (a deploy, a crash), the question would
keep live-looking buttons. So the edit is recorded first (chat, message, the HTML to show, and
when it is due) and the record removed once it is made or refused for good. Every replica
looks at the records every ``SWEEP_SECONDS`` and makes the ones that are due and no longer in
a replica's hands: released by a replica that stopped, or ``ORPHANED_AFTER`` seconds overdue
(a replica that crashed). An edit made twice costs Telegram's "message is not modified", never
a wrong message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from telegram.error import RetryAfter, TelegramError

from clarigate.adapters.leases import held
from clarigate.gateway.boundary.port import AdapterState

from .render import TelegramMessage
from .send import TelegramSender, delivery_failure, retry_seconds

log = logging.getLogger(__name__)

INDEX = "deferred-edits"  # the state key of the records, {id: record}
LOCK = "deferred-edits-lock"  # a lease held while the records are rewritten
RECORD_TTL = 24 * 3600  # a record no replica made within a day is dropped
SWEEP_SECONDS = 15.0  # how often each replica looks for edits to make
ORPHANED_AFTER = 60.0  # seconds overdue after which a replica's record is anyone's


@dataclass(frozen=True)
class RecordedEdit:
    """An edit ``AfterAck`` records when Telegram puts it off: callable as its effect."""

    sender: TelegramSender
    chat_id: str
    message_id: str
    message: TelegramMessage

    async def __call__(self) -> bool:
        return await self.sender.edit(self.chat_id, self.message_id, self.message)


class DeferredEdits:
    """The records of put-off edits in the shared state, and the sweep that makes them."""

    def __init__(self, state: AdapterState, sender: TelegramSender) -> None:
        self.state = state
        self.sender = sender
        self.replica = uuid.uuid4().hex[:12]
        self._sweeper: asyncio.Task[None] | None = None

    async def note(self, edit: RecordedEdit, due_in: float) -> str:
        """Record ``edit`` as this replica's, due in ``due_in`` seconds; its id."""
        edit_id = uuid.uuid4().hex
        record = {
            "chat": edit.chat_id,
            "message": edit.message_id,
            "text": edit.message.text,
            "due": time.time() + due_in,
            "by": self.replica,
        }
        await self._change(lambda records: records.__setitem__(edit_id, record))
        return edit_id

    async def done(self, edit_id: str) -> None:
        """The edit was made (or refused for good): no replica makes it again."""
        await self._change(lambda records: records.pop(edit_id, None))

    async def release(self, edit_ids: list[str]) -> None:
        """This replica stops: its edits are anyone's once due."""

        def release(records: dict[str, Any]) -> None:
            for edit_id in edit_ids:
                if edit_id in records:
                    records[edit_id]["by"] = None

        await self._change(release)

    def start(self) -> None:
        """Look for edits to make now, then every ``SWEEP_SECONDS``."""
        if self._sweeper is None:
            self._sweeper = asyncio.create_task(self._keep_sweeping())

    async def stop(self) -> None:
        """Stop looking."""
        if self._sweeper is not None:
            self._sweeper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sweeper
            self._sweeper = None

    async def sweep(self) -> None:
        """Make every edit that is due and in no replica's hands (see the module docstring)."""
        records: dict[str, Any] = await self.state.get_json(INDEX) or {}
        now = time.time()
        for edit_id, record in records.items():
            if record["due"] > now or (record.get("by") and record["due"] + ORPHANED_AFTER > now):
                continue
            shown = TelegramMessage(record["text"])
            try:
                await RecordedEdit(self.sender, record["chat"], record["message"], shown)()
            except RetryAfter as exc:  # put off again: due later, still anyone's
                wait = retry_seconds(exc)
                await self._change(lambda rs, i=edit_id, w=wait: _postpone(rs, i, w))  # type: ignore[misc]
                continue
            except TelegramError as exc:
                if not delivery_failure(exc, "editMessageText").permanent:
                    continue  # the next sweep tries again
                log.warning("telegram put-off edit of message %s refused: %s", record["message"], exc)
            await self.done(edit_id)

    async def _keep_sweeping(self) -> None:
        while True:
            try:
                await self.sweep()
            except Exception:  # the store away: the next sweep tries again
                log.warning("telegram put-off edits: sweep failed", exc_info=True)
            await asyncio.sleep(SWEEP_SECONDS)

    async def _change(self, change: Callable[[dict[str, Any]], Any]) -> None:
        """Rewrite the records under the lock (a lease: replicas rewrite them one at a time; after
        5 s without it, rewritten anyway)."""
        async with held(
            self.state, LOCK, lease_seconds=5, wait_seconds=5.0, poll_seconds=0.05, or_unheld=True
        ):
            records: dict[str, Any] = await self.state.get_json(INDEX) or {}
            change(records)
            if records:
                await self.state.set_json(INDEX, records, RECORD_TTL)
            else:
                await self.state.delete(INDEX)


def _postpone(records: dict[str, Any], edit_id: str, wait: float) -> None:
    if edit_id in records:
        records[edit_id].update(due=time.time() + wait, by=None)
