"""Stream workers: read jobs, wait for the thread's turn, run them, hand back on failure or stop.

Each replica runs ``workers`` read loops on the shared stream, a loop that
claims jobs left behind by dead consumers, and a keeper that touches held jobs
so live work is never claimed away. Stopping cancels the loops, lets running
jobs finish within the grace period and leaves the rest unacknowledged: another
replica claims them once they have been idle long enough.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from gateway.dispatch import HandBack
from gateway.store.base import Job, Store

log = logging.getLogger(__name__)

#: Turnstile polling starts fast and backs off to this ceiling (seconds).
MAX_TURN_POLL = 0.2
READ_BLOCK_MS = 1000


class WorkerPool:
    """The stream consumers of one gateway replica."""

    def __init__(
        self,
        store: Store,
        handle: Callable[[Job], Awaitable[None]],
        consumer: str,
        workers: int = 4,
        stale_after: float = 30.0,
    ) -> None:
        self.store = store
        self.handle = handle
        self.consumer = consumer
        self.workers = max(1, workers)
        self.stale_after = stale_after
        self._loops: list[asyncio.Task[None]] = []
        self._keeper: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._held: set[str] = set()
        self._stopping = False

    @property
    def busy(self) -> int:
        """How many jobs this replica holds right now (running or waiting for their turn)."""
        return len(self._running)

    def start(self) -> None:
        """Start the read loops, the stale-claim loop and the keeper."""
        self._stopping = False
        self._loops = [asyncio.create_task(self._read_loop(), name=f"read-{i}") for i in range(self.workers)]
        self._loops.append(asyncio.create_task(self._stale_loop(), name="claim-stale"))
        self._keeper = asyncio.create_task(self._keep_loop(), name="touch-held")

    async def stop(self, grace: float) -> None:
        """Stop reading; give running jobs ``grace`` seconds, then leave the rest in the stream."""
        self._stopping = True
        for loop in self._loops:
            loop.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        self._loops = []
        if self._running:
            _, unfinished = await asyncio.wait(set(self._running), timeout=max(grace, 0.0))
            for task in unfinished:
                task.cancel()
            if unfinished:
                await asyncio.gather(*unfinished, return_exceptions=True)
                log.warning("handed %d unfinished job(s) back to the stream", len(unfinished))
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
            self._keeper = None

    # --- loops ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while not self._stopping:
            try:
                jobs = await self.store.read_jobs(self.consumer, count=1, block_ms=READ_BLOCK_MS)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("reading jobs failed; retrying", exc_info=True)
                await asyncio.sleep(1.0)
                continue
            for job in jobs:
                # Waiting on the task (not awaiting it directly) keeps it alive when the loop is cancelled.
                await asyncio.wait({self._spawn(job)})

    async def _stale_loop(self) -> None:
        min_idle_ms = int(self.stale_after * 1000)
        pause = min(max(self.stale_after / 2, 0.05), 5.0)
        while not self._stopping:
            try:
                for job in await self.store.claim_stale_jobs(self.consumer, min_idle_ms, count=10):
                    log.info(
                        "claimed job %s left by another worker (delivery %d)", job.inbound_id, job.deliveries
                    )
                    self._spawn(job)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("claiming stale jobs failed", exc_info=True)
            await asyncio.sleep(pause)

    async def _keep_loop(self) -> None:
        pause = min(max(self.stale_after / 3, 0.02), 10.0)
        while True:
            await asyncio.sleep(pause)
            if self._held:
                try:
                    await self.store.touch_jobs(self.consumer, sorted(self._held))
                except Exception:
                    log.warning("touching held jobs failed", exc_info=True)

    # --- one job ------------------------------------------------------------------------------

    def _spawn(self, job: Job) -> asyncio.Task[None]:
        task = asyncio.create_task(self._run_job(job), name=f"job-{job.inbound_id}")
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return task

    async def _run_job(self, job: Job) -> None:
        self._held.add(job.entry_id)
        try:
            await self._wait_for_turn(job)
            await self.handle(job)
        except HandBack:
            pass  # left unacknowledged: the stale-claim loop retries it once idle
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s could not be processed", job.inbound_id)
        finally:
            self._held.discard(job.entry_id)

    async def _wait_for_turn(self, job: Job) -> None:
        """Wait until every earlier job of the same chat thread is complete."""
        delay = 0.002
        while await self.store.next_seq(job.order_key) < job.seq:
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_TURN_POLL)
