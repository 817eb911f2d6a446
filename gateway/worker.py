"""Stream workers: read jobs, wait for the thread's turn, run them, hand back on failure or stop.

Each replica runs a reader on the shared stream, at most ``workers`` runs at once, a loop that
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
    """The stream consumers of one gateway replica.

    A reader takes jobs as long as fewer than ``max_held`` are held; each job waits for its
    thread's turn without taking a run slot, so a burst to one slow thread never starves the
    others; at most ``workers`` jobs run at once.
    """

    def __init__(
        self,
        store: Store,
        handle: Callable[[Job], Awaitable[None]],
        consumer: str,
        workers: int = 4,
        stale_after: float = 30.0,
        max_held: int | None = None,
    ) -> None:
        self.store = store
        self.handle = handle
        self.consumer = consumer
        self.workers = max(1, workers)
        self.stale_after = stale_after
        self.max_held = max_held
        self._loops: list[asyncio.Task[None]] = []
        self._keeper: asyncio.Task[None] | None = None
        self._running: set[asyncio.Task[None]] = set()
        self._held: set[str] = set()
        self._slots = asyncio.Semaphore(self.workers)
        self._room = asyncio.Event()
        self._turn_changed: dict[str, asyncio.Event] = {}
        self._stopping = False

    @property
    def busy(self) -> int:
        """How many jobs this replica holds right now (running or waiting for their turn)."""
        return len(self._running)

    @property
    def _capacity(self) -> int:
        return self.max_held or self.workers * 16

    def start(self) -> None:
        """Start the reader, the stale-claim loop and the keeper."""
        self._stopping = False
        self._slots = asyncio.Semaphore(self.workers)
        self._loops = [
            asyncio.create_task(self._read_loop(), name="read-jobs"),
            asyncio.create_task(self._stale_loop(), name="claim-stale"),
        ]
        self._keeper = asyncio.create_task(self._keep_loop(), name="touch-held")

    async def stop(self, grace: float) -> None:
        """Stop reading; give held jobs ``grace`` seconds, then leave the rest in the stream."""
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
            room = self._capacity - len(self._running)
            if room <= 0:
                self._room.clear()
                await self._room.wait()
                continue
            try:
                jobs = await self.store.read_jobs(
                    self.consumer, count=min(room, self.workers), block_ms=READ_BLOCK_MS
                )
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("reading jobs failed; retrying", exc_info=True)
                await asyncio.sleep(1.0)
                continue
            for job in jobs:
                self._spawn(job)

    async def _stale_loop(self) -> None:
        min_idle_ms = int(self.stale_after * 1000)
        pause = min(max(self.stale_after / 2, 0.05), 5.0)
        while not self._stopping:
            try:
                for job in await self.store.claim_stale_jobs(self.consumer, min_idle_ms, count=10):
                    if job.entry_id in self._held:
                        continue  # ours already (a touch was missed): it is being worked on here
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
        task.add_done_callback(self._forget_task)
        return task

    def _forget_task(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._room.set()

    async def _run_job(self, job: Job) -> None:
        self._held.add(job.entry_id)
        try:
            await self._wait_for_turn(job)
            async with self._slots:
                await self.handle(job)
        except HandBack:
            pass  # left unacknowledged: the stale-claim loop retries it once idle
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s could not be processed", job.inbound_id)
        finally:
            self._held.discard(job.entry_id)
            changed = self._turn_changed.pop(job.order_key, None)
            if changed is not None:
                changed.set()  # wake this thread's next job here without waiting for a poll

    async def _wait_for_turn(self, job: Job) -> None:
        """Wait until every earlier job of the same chat thread is complete (here or elsewhere)."""
        if job.seq == 1:
            return  # seq 1 is handed out only when nothing of this chat thread is outstanding
        delay = 0.002
        while True:
            changed = self._turn_changed.setdefault(job.order_key, asyncio.Event())
            if await self.store.next_seq(job.order_key) >= job.seq:
                return
            try:
                await asyncio.wait_for(changed.wait(), delay)
            except TimeoutError:
                delay = min(delay * 2, MAX_TURN_POLL)
