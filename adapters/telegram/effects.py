"""Platform calls made after an update was acknowledged: they never fail the update.

A tap is answered (``answerCallbackQuery``) before anything else; the edits and posts
that follow are cosmetic for Telegram's delivery of the update: a deleted message, a
flood wait or an outage must neither make the webhook answer 500 (Telegram would
deliver the update again) nor keep it waiting. A flood wait or a transient error is
retried in the background once Telegram's wait is over; a permanent refusal is logged.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from telegram.error import TelegramError

from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.boundary.retry import RetryPolicy

from .send import MAX_FLOOD_WAIT, delivery_failure

log = logging.getLogger(__name__)

Effect = Callable[[], Awaitable[Any]]
LATER_TRIES = 3  # background attempts after the first one failed transiently
#: The background attempts: 1 s, 2 s, 4 s apart, never sooner than Telegram's flood wait (and a
#: flood wait over ``MAX_FLOOD_WAIT`` is Telegram telling us to stop).
LATER_RETRIES = RetryPolicy(first=1.0, attempts=1 + LATER_TRIES, longest_wait=MAX_FLOOD_WAIT)


class AfterAck:
    """Runs effects once at once; transient failures again in the background (tracked, stoppable)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, what: str, effect: Effect) -> None:
        """Run ``effect`` now; on a flood wait or transient error schedule it again; never raise."""
        failure = await self._attempt(what, effect)
        if failure is not None:
            task = asyncio.create_task(self._later(what, effect, failure))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

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

    async def _later(self, what: str, effect: Effect, first: DeliveryFailed) -> None:
        """The background attempts, by the one retry policy, after the first one failed."""
        try:
            await LATER_RETRIES.call(lambda: _classified(what, effect), failed_first=first)
        except DeliveryFailed as failure:
            if failure.permanent:
                log.warning("telegram %s after the acknowledgement failed: %s", what, failure.__cause__)
            else:
                log.warning("telegram %s still failing after %d retries: given up", what, LATER_TRIES)
        except Exception:
            log.warning("telegram %s after the acknowledgement failed", what, exc_info=True)

    async def settle(self) -> None:
        """Wait for the background retries (tests)."""
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def stop(self) -> None:
        """Cancel the background retries."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*list(self._tasks), return_exceptions=True)
        self._tasks.clear()


async def _classified(what: str, effect: Effect) -> None:
    """Run ``effect`` once; a Bot API error comes out as ``DeliveryFailed`` (flood waits with
    Telegram's ``retry_after``; a deleted message, a removed bot or a refused content permanent)."""
    try:
        await effect()
    except TelegramError as exc:
        raise delivery_failure(exc, what) from exc
