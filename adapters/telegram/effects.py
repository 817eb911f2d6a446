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

from telegram.error import BadRequest, Forbidden, InvalidToken, RetryAfter, TelegramError

from .send import MAX_FLOOD_WAIT, retry_seconds

log = logging.getLogger(__name__)

Effect = Callable[[], Awaitable[Any]]
LATER_TRIES = 3  # background attempts after the first one failed transiently


class AfterAck:
    """Runs effects once at once; transient failures again in the background (tracked, stoppable)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    async def run(self, what: str, effect: Effect) -> None:
        """Run ``effect`` now; on a flood wait or transient error schedule it again; never raise."""
        wait = await self._attempt(what, effect)
        if wait is not None:
            task = asyncio.create_task(self._later(what, effect, wait))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _attempt(self, what: str, effect: Effect) -> float | None:
        """None when done (or never to be retried), else seconds to wait before trying again."""
        try:
            await effect()
        except RetryAfter as exc:
            return min(retry_seconds(exc), MAX_FLOOD_WAIT)
        except (BadRequest, Forbidden, InvalidToken) as exc:
            # the message was deleted, the bot removed, the content refused: no retry helps
            log.warning("telegram %s after the acknowledgement failed: %s", what, exc)
        except TelegramError as exc:
            log.info("telegram %s failed (%s): retrying in the background", what, exc)
            return 1.0
        except Exception:
            log.warning("telegram %s after the acknowledgement failed", what, exc_info=True)
        return None

    async def _later(self, what: str, effect: Effect, wait: float) -> None:
        for _ in range(LATER_TRIES):
            await asyncio.sleep(wait)
            next_wait = await self._attempt(what, effect)
            if next_wait is None:
                return
            wait = max(next_wait, wait * 2)
        log.warning("telegram %s still failing after %d retries: given up", what, LATER_TRIES)

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
