"""Platform calls made after an update was acknowledged: they never fail the update.

A tap is answered (``answerCallbackQuery``) before anything else; the edits and posts
that follow are cosmetic for Telegram's delivery of the update: a deleted message, a
flood wait or an outage must neither make the webhook answer 500 (Telegram would
deliver the update again) nor keep it waiting. A flood wait or a transient error is
retried in the background once Telegram's wait is over; a permanent refusal is logged.
An edit that shows a question answered (``RecordedEdit``) is recorded when it is put off, so
that another replica makes it if this one stops first (``deferred``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from telegram.error import TelegramError

from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.port import AdapterState, DeliveryFailed
from clarigate.gateway.boundary.retry import RetryPolicy

from .deferred import DeferredEdits, RecordedEdit
from .receive import remember_chain
from .render import TelegramMessage, render_answered
from .send import MAX_FLOOD_WAIT, TelegramSender, delivery_failure

log = logging.getLogger(__name__)

Effect = Callable[[], Awaitable[Any]]
LATER_TRIES = 3  # background attempts after the first one failed transiently
#: The background attempts: 1 s, 2 s, 4 s apart, never sooner than Telegram's flood wait (and a
#: flood wait over ``MAX_FLOOD_WAIT`` is Telegram telling us to stop).
LATER_RETRIES = RetryPolicy(first=1.0, attempts=1 + LATER_TRIES, longest_wait=MAX_FLOOD_WAIT)


@dataclass
class TapReply:
    """How to answer a tap (``answerCallbackQuery``), and what to do once it is answered."""

    text: str | None = None
    alert: bool = False
    then: list[tuple[str, Effect]] = field(default_factory=list)


def answered_edit(
    sender: TelegramSender, request: HumanInputRequest, chat_id: str, message_id: str, line: str
) -> tuple[str, Effect]:
    """The effect that shows a question as answered (or dismissed): the question and the line."""
    return ("editMessageText", RecordedEdit(sender, chat_id, message_id, render_answered(request, line)))


def posted_note(
    sender: TelegramSender, state: AdapterState, where: Conversation, note: TelegramMessage
) -> tuple[str, Effect]:
    """The effect that posts a note of the adapter's own ("That form is closed.", an approval's
    edit dropped) in ``where`` and links it to ``where``'s reply chain in a group: a reply to the
    note stays in that conversation, as a reply to any of the bot's messages does."""

    async def post() -> None:
        sent = await sender.post(where, note)
        await remember_chain(state, where, str(sent.message_id), str(sent.chat_id))

    return ("sendMessage", post)


class AfterAck:
    """Runs effects once at once; transient failures again in the background (tracked, stoppable)."""

    def __init__(self, deferred: DeferredEdits | None = None) -> None:
        self.deferred = deferred
        self._tasks: set[asyncio.Task[None]] = set()
        self._recorded: dict[asyncio.Task[None], str] = {}  # a background retry -> its edit's record

    async def run(self, what: str, effect: Effect) -> None:
        """Run ``effect`` now; on a flood wait or transient error schedule it again (a
        ``RecordedEdit`` recorded first, for any replica to make); never raise."""
        failure = await self._attempt(what, effect)
        if failure is None:
            return
        edit_id = await self._record(effect, failure)
        task = asyncio.create_task(self._later(what, effect, failure, edit_id))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if edit_id is not None:
            self._recorded[task] = edit_id
            task.add_done_callback(lambda done: self._recorded.pop(done, None))

    async def _record(self, effect: Effect, failure: DeliveryFailed) -> str | None:
        if self.deferred is None or not isinstance(effect, RecordedEdit):
            return None
        try:
            return await self.deferred.note(effect, failure.retry_after or LATER_RETRIES.first)
        except Exception:  # the store away: this replica's retry alone makes it
            log.warning("telegram put-off edit not recorded", exc_info=True)
            return None

    async def _attempt(self, what: str, effect: Effect) -> DeliveryFailed | None:
        """None when done (or never to be retried), else the transient failure to retry after."""
        try:
            await _classified(what, effect)
        except DeliveryFailed as failure:
            if not failure.permanent:
                log.info("telegram %s failed (%s): retrying in the background", what, failure.__cause__)
                return failure
            # the message was deleted, the bot removed, the content refused: no retry helps
            log.warning("telegram %s after the acknowledgement failed: %s", what, failure.__cause__)
        except Exception:
            log.warning("telegram %s after the acknowledgement failed", what, exc_info=True)
        return None

    async def _later(self, what: str, effect: Effect, first: DeliveryFailed, edit_id: str | None) -> None:
        """The background attempts, by the one retry policy, after the first one failed; a
        recorded edit's record goes once it is made or refused, or is left to any replica."""
        made = True
        try:
            await LATER_RETRIES.call(lambda: _classified(what, effect), failed_first=first)
        except DeliveryFailed as failure:
            if failure.permanent:
                log.warning("telegram %s after the acknowledgement failed: %s", what, failure.__cause__)
            else:
                log.warning("telegram %s still failing after %d retries: given up", what, LATER_TRIES)
                made = False
        except Exception:
            log.warning("telegram %s after the acknowledgement failed", what, exc_info=True)
        if edit_id is not None and self.deferred is not None:
            with contextlib.suppress(Exception):  # a record left behind: a sweep makes the edit again
                await (self.deferred.done(edit_id) if made else self.deferred.release([edit_id]))

    async def settle(self) -> None:
        """Wait for the background retries (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel the background retries; the recorded edits among them are left to any replica."""
        recorded = list(self._recorded.values())
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self._tasks.clear()
        if recorded and self.deferred is not None:
            try:
                await self.deferred.release(recorded)
            except Exception:  # they become anyone's once overdue all the same
                log.warning("telegram put-off edits not released", exc_info=True)


async def _classified(what: str, effect: Effect) -> None:
    """Run ``effect`` once; a Bot API error comes out as ``DeliveryFailed`` (flood waits with
    Telegram's ``retry_after``; a deleted message, a removed bot or a refused content permanent)."""
    try:
        await effect()
    except TelegramError as exc:
        raise delivery_failure(exc, what) from exc
