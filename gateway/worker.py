"""Stream workers: read jobs, wait for the thread's turn, run them, hand back on failure or stop.

Each replica runs a reader on the shared stream, at most ``workers`` runs at once, a loop that
claims jobs left behind by dead consumers, and a keeper that touches held jobs
so live work is never claimed away. Stopping cancels the loops, lets running
jobs finish within the grace period and leaves the rest unacknowledged: another
replica claims them once they have been idle long enough.

A replica that stalls past the stale-claim time (a blocked loop, a partition)
may find on waking that another took its job over: the keeper then cancels
that run, and a job checks ``still_held`` before its first reply, so the new
holder alone answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from gateway import metrics
from gateway.dispatch import READ_AHEAD, HandBack, ReadAhead
from gateway.store.base import HoldStatus, Job, Store

log = logging.getLogger(__name__)

#: Turnstile polling starts fast and backs off to this ceiling (seconds).
MAX_TURN_POLL = 0.2
READ_BLOCK_MS = 1000


class LoopHealth:
    """One line when a loop starts failing and one when it works again, not a traceback per try.

    ``failing`` is what ``/healthz`` and the metrics read; the traceback is logged at DEBUG only.
    """

    def __init__(self, what: str, operation: str) -> None:
        self.what = what
        self.operation = operation  # the store-errors metric's label
        self.failing_since: float | None = None
        self.failures = 0

    @property
    def failing(self) -> bool:
        """True from the first failure until the next success."""
        return self.failing_since is not None

    def failed(self, exc: BaseException) -> None:
        """Count a failure; log it when it is the first of a run of failures."""
        self.failures += 1
        metrics.STORE_ERRORS.labels(operation=self.operation).inc()
        if self.failing_since is None:
            self.failing_since = time.monotonic()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.warning("%s failed (%s); retrying until it works", self.what, reason)
        log.debug("%s failed", self.what, exc_info=exc)

    def worked(self) -> None:
        """Note a success; log the recovery when it ends a run of failures."""
        if self.failing_since is not None:
            log.info(
                "%s works again after %d failure(s) in %.0f s",
                self.what,
                self.failures,
                time.monotonic() - self.failing_since,
            )
            self.failing_since = None
            self.failures = 0


@dataclass
class _Run:
    """One job's run: whether it holds a run slot (it may pass the slot on to the next job)."""

    has_slot: bool = False
    wants_slot: bool = False  # its turn has come and it waits for a slot (counted in the pool)


class WorkerPool:
    """The stream consumers of one gateway replica.

    A reader takes jobs while a run slot is free and fewer than ``max_held`` are held; each job
    waits for its thread's turn without taking a run slot, so a burst to one slow thread never
    starves the others; at most ``workers`` jobs run at once. While every slot is busy, new jobs
    wait in the stream: a job that completes reads the next one in the same store call and,
    when its turn has come and no job here waits for a slot, hands its slot straight over (with
    the thread lookups read in that call, so the run starts without another round trip).
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
        self._tasks: dict[str, asyncio.Task[None]] = {}  # entry id -> the task working on it
        self._fresh: dict[str, float] = {}  # entry id -> when its hold was last confirmed (monotonic)
        self._slots = asyncio.Semaphore(self.workers)
        self._in_slots = 0  # runs holding a slot
        self._waiting_for_slot = 0  # runs whose turn has come, waiting for a slot
        self._room = asyncio.Event()
        self._turn_changed: dict[str, asyncio.Event] = {}
        self._stopping = False
        self._context = contextvars.copy_context()  # what each job's task starts from
        self._unstarted: list[str] = []  # jobs read while stopping, never started
        self.reading = LoopHealth("reading jobs", "read_jobs")
        self.claiming = LoopHealth("claiming stale jobs", "claim_stale_jobs")
        self.keeping = LoopHealth("touching held jobs", "keep_jobs")

    @property
    def busy(self) -> int:
        """How many jobs this replica holds right now (running or waiting for their turn)."""
        return len(self._running)

    @property
    def _capacity(self) -> int:
        return self.max_held or self.workers * 16

    def dead_loops(self) -> list[str]:
        """The names of loops that ended while the pool runs (``/healthz`` fails on any)."""
        if self._stopping:
            return []
        loops = [*self._loops, *([self._keeper] if self._keeper is not None else [])]
        return [loop.get_name() for loop in loops if loop.done()]

    def start(self) -> None:
        """Start the reader, the stale-claim loop and the keeper."""
        self._stopping = False
        self._slots = asyncio.Semaphore(self.workers)
        self._in_slots = self._waiting_for_slot = 0
        self._context = contextvars.copy_context()
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
            left = [entry_id for entry_id, task in self._tasks.items() if task in unfinished]
            for task in unfinished:
                task.cancel()
            if unfinished:
                await asyncio.gather(*unfinished, return_exceptions=True)
            left += self._unstarted
            self._unstarted = []
            if left:
                await self._hand_back(left)
        if self._keeper is not None:
            self._keeper.cancel()
            await asyncio.gather(self._keeper, return_exceptions=True)
            self._keeper = None

    async def _hand_back(self, entry_ids: list[str]) -> None:
        """Release unfinished jobs so another replica takes them now, not after the stale time."""
        try:
            await self.store.release_jobs(self.consumer, entry_ids)
        except Exception:
            log.warning("could not release %d job(s): claimed once stale", len(entry_ids), exc_info=True)
        log.warning("handed %d unfinished job(s) back to the stream", len(entry_ids))

    # --- loops ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while not self._stopping:
            room = self._capacity - len(self._running)
            free = self.workers - self._in_slots - self._waiting_for_slot
            if room <= 0 or free <= 0:
                # every slot busy: completing jobs read the next ones (``_read_ahead``)
                self._room.clear()
                await self._room.wait()
                continue
            try:
                jobs = await self.store.read_jobs(
                    self.consumer, count=min(room, free), block_ms=READ_BLOCK_MS
                )
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.reading.failed(exc)
                await asyncio.sleep(1.0)
                continue
            self.reading.worked()
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
                self.claiming.worked()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.claiming.failed(exc)
            await asyncio.sleep(pause)

    async def _keep_loop(self) -> None:
        pause = min(max(self.stale_after / 3, 0.02), 10.0)
        while True:
            await asyncio.sleep(pause)
            if self._held:
                try:
                    await self._keep(sorted(self._held))
                    self.keeping.worked()
                except Exception as exc:
                    self.keeping.failed(exc)

    async def _keep(self, entry_ids: list[str], drop_taken: bool = True) -> dict[str, HoldStatus]:
        """Renew the hold on ``entry_ids``; a job another consumer took over is dropped here."""
        confirmed = time.monotonic()
        statuses = await self.store.keep_jobs(self.consumer, entry_ids)
        for entry_id, status in statuses.items():
            if status == "held":
                self._fresh[entry_id] = confirmed
            elif status == "taken" and drop_taken:
                task = self._tasks.get(entry_id)
                if task is not None and not task.done():
                    # this replica stalled past the stale-claim time: the new holder answers
                    log.warning("job %s was taken over by another worker: dropping it here", entry_id)
                    task.cancel()
        return statuses

    async def still_held(self, job: Job) -> bool:
        """True when this replica may still reply for ``job`` (checked before its first reply).

        Free while the hold was confirmed recently (nobody can have claimed the job since); else
        one store call. False when another worker took the job over or it was answered already.
        """
        fresh = self._fresh.get(job.entry_id)
        if fresh is not None and time.monotonic() - fresh < self.stale_after / 2:
            return True
        status = (await self._keep([job.entry_id], drop_taken=False)).get(job.entry_id, "gone")
        if status == "gone":  # acknowledged, or the stream was lost: answered already?
            return not await self.store.is_done(job.inbound_id)
        return status == "held"

    # --- one job ------------------------------------------------------------------------------

    def _spawn(self, job: Job, run: _Run | None = None) -> asyncio.Task[None]:
        run = run or _Run()
        if not run.has_slot and (job.seq == 1 or job.turn_ready):
            self._want_slot(run)  # counted from now: a completing job leaves its slot to this one
        self._fresh[job.entry_id] = time.monotonic()  # just delivered or claimed: idle time 0
        # a fresh copy of the pool's context: nothing of the job that read this one carries over
        task = asyncio.create_task(
            self._run_job(job, run), name=f"job-{job.inbound_id}", context=self._context.copy()
        )
        self._tasks[job.entry_id] = task
        self._running.add(task)
        task.add_done_callback(lambda done: self._forget_task(done, run))
        return task

    def _forget_task(self, task: asyncio.Task[None], run: _Run) -> None:
        self._running.discard(task)
        # when cancelled before it started, its ``finally`` never ran
        self._no_longer_wants_slot(run)
        self._give_back_slot(run)
        self._room.set()

    def _want_slot(self, run: _Run) -> None:
        if not run.wants_slot:
            run.wants_slot = True
            self._waiting_for_slot += 1

    def _no_longer_wants_slot(self, run: _Run) -> None:
        if run.wants_slot:
            run.wants_slot = False
            self._waiting_for_slot -= 1

    def _give_back_slot(self, run: _Run) -> None:
        if run.has_slot:
            run.has_slot = False
            self._in_slots -= 1
            self._slots.release()
            self._room.set()

    def _read_ahead(self) -> int:
        """How many jobs a completing job reads: one, unless a job here waits for a slot."""
        return 0 if self._stopping or self._waiting_for_slot else 1

    def _take(self, run: _Run, jobs: list[Job]) -> None:
        """Start jobs a completing run read; the first whose turn has come gets its slot."""
        for job in jobs:
            if self._stopping:  # read as the pool stopped: handed back with the unfinished jobs
                self._unstarted.append(job.entry_id)
            elif run.has_slot and job.turn_ready and not self._waiting_for_slot:
                run.has_slot = False
                self._spawn(job, _Run(has_slot=True))
            else:
                job.thread_lookup = None  # it waits before it runs: look up afresh then
                self._spawn(job)

    async def _run_job(self, job: Job, run: _Run) -> None:
        self._held.add(job.entry_id)
        try:
            await self._wait_for_turn(job)
            if not run.has_slot:
                self._want_slot(run)
                try:
                    await self._slots.acquire()
                finally:
                    self._no_longer_wants_slot(run)
                run.has_slot = True
                self._in_slots += 1
            READ_AHEAD.set(ReadAhead(self.consumer, self._read_ahead, lambda jobs: self._take(run, jobs)))
            await self.handle(job)
        except HandBack:
            pass  # left unacknowledged: the stale-claim loop retries it once idle
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s could not be processed", job.inbound_id)
        finally:
            self._give_back_slot(run)
            self._held.discard(job.entry_id)
            self._fresh.pop(job.entry_id, None)
            if self._tasks.get(job.entry_id) is asyncio.current_task():
                del self._tasks[job.entry_id]
            changed = self._turn_changed.pop(job.order_key, None)
            if changed is not None:
                changed.set()  # wake this thread's next job here without waiting for a poll

    async def _wait_for_turn(self, job: Job) -> None:
        """Wait until every earlier job of the same chat thread is complete (here or elsewhere)."""
        if job.seq == 1 or job.turn_ready:
            return  # seq 1 is handed out only when nothing of this chat thread is outstanding
        delay = 0.002
        task = asyncio.current_task()
        while True:
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # a cancellation something below swallowed: honour it
            changed = self._turn_changed.setdefault(job.order_key, asyncio.Event())
            if await self.store.next_seq(job.order_key) >= job.seq:
                return
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a cancellation
            # that lands as the event is set (the job ahead finishing as the pool stops), and
            # this loop would then poll forever and hang the shutdown.
            try:
                async with asyncio.timeout(delay):
                    await changed.wait()
            except TimeoutError:
                delay = min(delay * 2, MAX_TURN_POLL)
