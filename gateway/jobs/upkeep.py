"""Upkeep: what keeps storage bounded on a long-running deployment.

Every replica, every ``upkeep_interval_seconds``:

- trims the job stream of acknowledged entries (never an unread or pending one, whatever the
  stream's length);
- removes stream consumers that hold no jobs and were silent for ``DEAD_CONSUMER_SECONDS``
  (one is made per process start; ``clarigate admin consumers --prune`` uses the same time);
- deletes from the checkpointer the agent threads whose cleanup is due: left by ``/new`` for
  ``thread_retention_seconds``, or unused since their chat mapping expired plus that period.

Each step is safe on several replicas at once; a failing step is logged and tried next time.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by ``clarigate admin``'s parser for DEAD_CONSUMER_SECONDS: stays light
    from clarigate.gateway.runtime.config import GatewayConfig
    from clarigate.gateway.store.base import Store

log = logging.getLogger(__name__)

#: A consumer with no jobs, silent this long, belongs to a process that is gone. A day, not less:
#: Redis before 7.2 counts a consumer's idle time from the last job it was handed, so a live
#: replica of a quiet bot looks idle for hours (removing it loses nothing, but ``admin consumers`` would
#: no longer list it).
DEAD_CONSUMER_SECONDS = 24 * 3600.0
#: Threads deleted per round at most (the rest wait for the next round).
THREADS_PER_ROUND = 100


class Upkeep:
    """The periodic upkeep of one replica (``start``/``stop`` with the gateway)."""

    def __init__(self, config: GatewayConfig, store: Store, runner: Any, consumer: str) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        self.consumer = consumer
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Run a round every ``upkeep_interval_seconds``, the first one after a random part of it
        (replicas started together do not all trim at once; a short-lived process does none)."""
        self._task = asyncio.create_task(self._loop(), name="upkeep")

    async def stop(self) -> None:
        """Stop the loop (a round in progress is cancelled; it is safe to repeat)."""
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _loop(self) -> None:
        interval = self.config.upkeep_interval_seconds
        await asyncio.sleep(interval * random.uniform(0.5, 1.0))  # noqa: S311 (spreading, not security)
        while True:
            await self.run_once()
            await asyncio.sleep(interval)

    async def run_once(self) -> None:
        """One round of every step."""
        for step in (self._trim, self._dead_consumers, self._old_threads):
            try:
                await step()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("upkeep step %s failed: tried again next round", step.__name__, exc_info=True)

    async def _trim(self) -> None:
        removed = await self.store.trim_acknowledged()
        if removed:
            log.info("trimmed %d acknowledged job(s) from the stream", removed)

    async def _dead_consumers(self) -> None:
        removed = await self.store.remove_idle_consumers(DEAD_CONSUMER_SECONDS, keep=self.consumer)
        if removed:
            log.info("removed %d dead stream consumer(s): %s", len(removed), ", ".join(removed))

    async def _old_threads(self) -> None:
        delete = getattr(self.runner, "delete_thread", None)
        if delete is None:
            return  # this runner keeps no threads of its own
        for thread_id, due in await self.store.threads_due_for_cleanup(time.time(), THREADS_PER_ROUND):
            await delete(thread_id)
            await self.store.thread_cleaned(thread_id, due)
            log.info("deleted abandoned agent thread %s from the checkpointer", thread_id)
