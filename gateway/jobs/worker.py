"""Stream workers: read jobs, wait for the thread's turn, run them, hand back on failure or stop.

Each replica runs a reader on the shared stream, a loop that claims jobs left behind by dead
consumers, and a keeper that renews the claim on every job held here, so live work is never
claimed away. Each job's turn gets a ``JobHandle`` (``clarigate.gateway.jobs.handle``): the job,
``still_held`` and ``run_slot``. At most ``workers`` agent runs go at once (the run slot); a job
whose run is over and whose replies are still being delivered (a platform retried with backoff)
holds no slot.
Stopping cancels the loops, lets held jobs finish within the grace period and hands the rest
back to the stream at once.

Claims are fenced. A replica claims a job only when its owner stopped renewing it, judged by
the job's idle time in Redis *and* by this replica having reached Redis without a break for
the whole stale-claim time: idle time keeps counting while Redis is down, so right after an
outage every job looks stale; the owner, back as well, renews its jobs within that time. A
replica that stalls past the stale-claim time may still find its job taken over: the keeper
then cancels that job here, and every send first asks the handle's ``still_held``, so one holder
answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from clarigate.gateway.jobs.handle import Declined, HandBack, JobHandle, decline_within, platform_of
from clarigate.gateway.jobs.health import LoopHealth
from clarigate.gateway.jobs.turns import Turns
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import RELEASED_IDLE_SECONDS
from clarigate.gateway.store.records import HoldStatus, Job, Skip

log = logging.getLogger(__name__)

#: Jobs read this long after the store was unreachable are unproven (a Redis that restarted
#: may have lost the notes of what they sent): their items are looked for on the platform.
UNPROVEN_AFTER_OUTAGE = 60.0
READ_BLOCK_MS = 1000
#: While every run slot is busy the reader polls the stream this often (seconds), for commands.
BUSY_READ_POLL = 0.1
#: ... and holds at most this many jobs beyond its run slots (at least; a quarter of the slots
#: when more): enough for the commands among a usual backlog, few enough that the rest of the
#: backlog stays in Redis for a replica with a free slot.
BUSY_READ_AHEAD = 16


class _Held(JobHandle):
    """A job held here (the handle its turn gets), and whether it takes part in the read budget."""

    def __init__(self, pool: WorkerPool, job: Job) -> None:
        super().__init__(job, unproven=pool.after_outage(job))
        self._pool = pool
        self.task: asyncio.Task[None] | None = None
        self.parked = False  # waiting for an earlier job of its thread, or delivering after its run

    async def still_held(self) -> bool:
        """True when this replica may still send for the job (see ``WorkerPool.still_held``)."""
        return await self._pool.still_held(self.job)

    @asynccontextmanager
    async def run_slot(self) -> AsyncIterator[None]:
        """Hold one of the pool's ``workers`` run slots (around an agent run, not around delivery)."""
        async with self._pool._slots:
            yield
        self.parked = True  # delivering now: the reader may take the next job
        self._pool._room.set()


class WorkerPool:
    """The stream consumers of one gateway replica.

    The reader waits on the stream while fewer than ``workers`` held jobs are ready to run or
    running, so a burst spreads over the replicas instead of queueing on the first one. With
    every run slot busy it still polls the stream (without blocking) while it holds fewer than
    ``workers`` + ``BUSY_READ_AHEAD`` (a quarter of ``workers`` when more) jobs: the jobs are one
    stream, and the commands among them (``kind`` "command": ``/status``, ``/cancel``…) run
    without a run slot, so they answer at once even then, unless more messages than that wait
    ahead of them; the messages read with them wait here for a slot. At most ``max_held``
    (``workers`` × 16 unless given) are held at all.
    A job waits for the earlier jobs of its chat thread (``clarigate.gateway.jobs.turns``); a
    command for the command before it only briefly (``COMMAND_TURN_WAIT``).
    """

    def __init__(
        self,
        store: Store,
        handle: Callable[[JobHandle], Awaitable[None]],
        consumer: str,
        workers: int = 4,
        stale_after: float = 30.0,
        max_held: int | None = None,
    ) -> None:
        self.store = store
        self.handle = handle  # the turn: given each job's handle once the job's turn came
        self.consumer = consumer
        self.workers = max(1, workers)
        self.stale_after = stale_after
        self.max_held = max_held
        self._loops: list[asyncio.Task[None]] = []
        self._keeper: asyncio.Task[None] | None = None
        self._held: dict[str, _Held] = {}  # entry id -> the job held here
        # platform this replica has no adapter for -> how long after acceptance its jobs are left
        # to other replicas (learnt from the turn's ``Declined``): not claimed, handed back if read
        self._lacks: dict[str, float] = {}
        self._fresh: dict[str, float] = {}  # entry id -> when its hold was last confirmed (monotonic)
        self.turns = Turns(store, self._unreachable)  # the order of each chat thread's jobs
        self._slots = asyncio.Semaphore(self.workers)
        self._room = asyncio.Event()
        self._stopping = False
        self._context = contextvars.copy_context()  # what each job's task starts from
        self._reachable_since: float | None = None  # Redis answered every call since (monotonic)
        self._unreachable_at: float | None = None  # when a store call last failed (unix time)
        self.reading = LoopHealth("reading jobs", "read_jobs")
        self.claiming = LoopHealth("claiming stale jobs", "claim_stale_jobs")
        self.keeping = LoopHealth("renewing held jobs", "keep_jobs")

    @property
    def busy(self) -> int:
        """How many jobs this replica holds right now (running, waiting or delivering)."""
        return len(self._held)

    @property
    def _capacity(self) -> int:
        return self.max_held or self.workers * 16

    def dead_loops(self) -> list[str]:
        """The names of loops that ended while the pool runs (``/healthz`` fails on any)."""
        if self._stopping:
            return []
        loops = [*self._loops, *([self._keeper] if self._keeper is not None else [])]
        return [loop.get_name() for loop in loops if loop.done()]

    def _active(self) -> int:
        return sum(1 for held in self._held.values() if not held.parked)

    def start(self, workers: int | None = None) -> None:
        """Start the reader, the stale-claim loop and the keeper (with ``workers`` run slots when
        given, else the number the pool was built with)."""
        if workers is not None:
            self.workers = max(1, workers)
        self._stopping = False
        self._slots = asyncio.Semaphore(self.workers)
        self._context = contextvars.copy_context()
        self._reachable_since = None
        self._loops = [
            asyncio.create_task(self._read_loop(), name="read-jobs"),
            asyncio.create_task(self._stale_loop(), name="claim-stale"),
        ]
        self._keeper = asyncio.create_task(self._keep_loop(), name="touch-held")

    async def stop(self, grace: float) -> None:
        """Stop reading; give held jobs ``grace`` seconds, then hand the rest back to the stream."""
        self._stopping = True
        for loop in self._loops:
            loop.cancel()
        await asyncio.gather(*self._loops, return_exceptions=True)
        self._loops = []
        tasks = {held.task: entry_id for entry_id, held in self._held.items() if held.task is not None}
        if tasks:
            _, unfinished = await asyncio.wait(set(tasks), timeout=max(grace, 0.0))
            for task in unfinished:
                task.cancel()
            if unfinished:
                await asyncio.gather(*unfinished, return_exceptions=True)
                await self._hand_back([tasks[task] for task in unfinished])
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

    # --- Redis reachability (the claim fence) -----------------------------------------------------

    def _reached(self) -> None:
        if self._reachable_since is None:
            self._reachable_since = time.monotonic()

    def _unreachable(self) -> None:
        self._reachable_since = None
        self._unreachable_at = time.time()

    def after_outage(self, job: Job) -> bool:
        """True for a job read within ``UNPROVEN_AFTER_OUTAGE`` seconds of a failed store call that
        was accepted before it (its stream entry id is its time in ms): only such a job can have
        been sent already by a read the outage lost."""
        failed = self._unreachable_at
        if failed is None or time.time() - failed >= UNPROVEN_AFTER_OUTAGE:
            return False
        try:
            return int(job.entry_id.split("-")[0]) / 1000 <= failed + 1.0
        except ValueError:
            return True

    def _claim_idle_ms(self) -> int:
        """The idle time a job must show to be claimed: the stale time once Redis was reachable
        without a break for that long, else only jobs handed back by a stopping replica."""
        since = self._reachable_since
        if since is not None and time.monotonic() - since >= self.stale_after:
            return int(self.stale_after * 1000)
        return int(RELEASED_IDLE_SECONDS * 1000)

    # --- loops ----------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        while not self._stopping:
            free = self.workers - self._active()
            ahead = max(BUSY_READ_AHEAD, self.workers // 4)
            cap = self._capacity if free > 0 else min(self._capacity, self.workers + ahead)
            room = cap - len(self._held)
            if room <= 0:
                await self._wait_for_room(None)
                continue
            # every run slot busy: read on for the commands among the jobs (they run without a
            # slot), but only without blocking, so a replica with a free slot, blocked on the
            # stream, is served each new job first (Redis serves blocked reads before later ones)
            count, block_ms = (min(room, free), READ_BLOCK_MS) if free > 0 else (room, 0)
            try:
                jobs = await self.store.read_jobs(self.consumer, count=count, block_ms=block_ms)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._unreachable()
                self.reading.failed(exc)
                await asyncio.sleep(1.0)
                continue
            self._reached()
            self.reading.worked()
            for job in jobs:
                if job.entry_id not in self._held:  # read again after a Redis restart lost its read:
                    self._spawn(job)  # it is being worked on here already, once
            if free <= 0 and not jobs and self.workers - self._active() <= 0:
                await self._wait_for_room(BUSY_READ_POLL)

    async def _wait_for_room(self, at_most: float | None) -> None:
        """Wait until a job here parks or ends (at most ``at_most`` seconds when given)."""
        self._room.clear()
        try:
            async with asyncio.timeout(at_most):  # not wait_for: it can swallow a cancellation
                await self._room.wait()
        except TimeoutError:
            pass

    async def _stale_loop(self) -> None:
        pause = min(max(self.stale_after / 2, 0.05), 5.0)
        while not self._stopping:
            try:
                claimed = await self.store.claim_stale_jobs(
                    self.consumer, self._claim_idle_ms(), count=10, skip=self._skip()
                )
                for job in claimed:
                    if job.entry_id in self._held:
                        continue  # ours already (a renewal was missed): it is being worked on here
                    log.info(
                        "claimed job %s left by another worker (delivery %d)", job.inbound_id, job.deliveries
                    )
                    self._spawn(job)
                self._reached()
                self.claiming.worked()
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self._unreachable()
                self.claiming.failed(exc)
            await asyncio.sleep(pause)

    def _skip(self) -> Skip:
        """The platforms this replica lacks, for the stale claim: their jobs younger than the
        budget are left to a replica that has them (older ones are claimed, to be ended)."""
        if not self._lacks:
            return None
        return frozenset(self._lacks), time.time() - max(self._lacks.values())

    async def _keep_loop(self) -> None:
        pause = min(max(self.stale_after / 3, 0.02), 10.0)
        while True:
            await asyncio.sleep(pause)
            if self._held:
                try:
                    await self._keep(sorted(self._held))
                    self.keeping.worked()
                except Exception as exc:
                    self._unreachable()
                    self.keeping.failed(exc)

    async def _keep(self, entry_ids: list[str], drop_taken: bool = True) -> dict[str, HoldStatus]:
        """Renew the hold on ``entry_ids``; a job another consumer took over is dropped here."""
        confirmed = time.monotonic()
        statuses = await self.store.keep_jobs(self.consumer, entry_ids)
        for entry_id, status in statuses.items():
            if status == "held":
                self._fresh[entry_id] = confirmed
            elif status == "taken" and drop_taken:
                held = self._held.get(entry_id)
                if held is not None and held.task is not None and not held.task.done():
                    # this replica stalled past the stale-claim time: the new holder answers
                    log.warning("job %s was taken over by another worker: dropping it here", entry_id)
                    held.task.cancel()
        return statuses

    async def still_held(self, job: Job) -> bool:
        """True when this replica may still send for ``job`` (checked before every send).

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

    def _spawn(self, job: Job) -> None:
        held = _Held(self, job)
        self._held[job.entry_id] = held
        self.turns.arrived(job)
        self._fresh[job.entry_id] = time.monotonic()  # just delivered or claimed: idle time 0
        # a fresh copy of the pool's context: nothing of another job's task carries over
        held.task = asyncio.create_task(
            self._run_job(held), name=f"job-{job.inbound_id}", context=self._context.copy()
        )

    async def _run_job(self, held: _Held) -> None:
        job = held.job
        try:
            budget = self._lacks.get(platform_of(job))
            if budget is not None:
                decline_within(job, budget)  # not even waiting for its turn here
            await self._wait_for_turn(held)
            await self.handle(held)
        except Declined as declined:
            await self._decline(held, declined)
        except HandBack:
            pass  # left unacknowledged: the stale-claim loop retries it once idle
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("job %s could not be processed", job.inbound_id)
        finally:
            if self._held.get(job.entry_id) is held:
                del self._held[job.entry_id]
            self._fresh.pop(job.entry_id, None)
            self.turns.ended(job)  # wakes this thread's next job here
            self._room.set()

    async def _decline(self, held: _Held, declined: Declined) -> None:
        """Hand a job of a platform this replica lacks back to the stream at once, for a replica
        that has it (its stale claim takes it); this one claims no such job again."""
        if declined.platform not in self._lacks:
            log.warning(
                "this replica has no platform %r but jobs for it arrive (replicas configured "
                "differently, e.g. during a rolling update): leaving them to replicas that have it",
                declined.platform,
            )
        self._lacks[declined.platform] = declined.budget
        self._held.pop(held.job.entry_id, None)  # not renewed from now on
        try:
            await self.store.decline_jobs(self.consumer, [held.job.entry_id])
        except Exception:
            log.warning("could not hand job %s back: claimed once stale", held.job.inbound_id, exc_info=True)

    async def _wait_for_turn(self, held: _Held) -> None:
        """Wait until it is the job's turn in its chat thread (``Turns.wait``), parked meanwhile."""
        try:
            await self.turns.wait(held.job, lambda: self._park(held))
        finally:
            held.parked = False  # its turn came: ready to run (the reader counts it again)

    def _park(self, held: _Held) -> None:
        if not held.parked:
            held.parked = True
            self._room.set()
