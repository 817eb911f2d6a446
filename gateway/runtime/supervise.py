"""How the web process keeps its worker processes: one that dies is started again, the replica stays.

A worker process that exits unasked (the OOM killer, a crash, ``kill -9``) is started again after
a backoff: ``FIRST_BACKOFF_SECONDS`` after a first death, doubled for each further death within
``DEATH_WINDOW_SECONDS``. Each death is logged once and counted
(``clarigate_worker_process_deaths_total``). Meanwhile the web process goes on acking and
queueing, its health and readiness stay green (the restart is what would mend it), and the jobs
the dead process held are claimed by the usual rules: by any worker process of any replica once
they are ``stale_claim_seconds`` old.

Too often is ``DEATH_LIMIT`` deaths (5) of the replica's worker processes within
``DEATH_WINDOW_SECONDS`` (60 s): a process that dies that often is not mended by one more try (a
setting, a dependency, memory), so the web process stops and exits with a failing status, and the
orchestrator restarts the replica as a whole (or reports it crash-looping).

How many worker processes a replica starts also lives here: a checkpointer the processes cannot
share (``memory://``, each process's own memory) forces one, with a warning, so a click on a
question reaches the process that holds the question's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from typing import TYPE_CHECKING

from clarigate.gateway.runtime.metrics import WORKER_PROCESS_DEATHS
from clarigate.gateway.runtime.processes import WorkerExited, worker_process_count

if TYPE_CHECKING:
    from clarigate.gateway.runtime.config import GatewayConfig
    from clarigate.gateway.runtime.processes import WorkerGroup, WorkerProcess

log = logging.getLogger("clarigate.gateway.runtime.serve")

#: This many deaths of a replica's worker processes within the window end the replica.
DEATH_LIMIT = 5
DEATH_WINDOW_SECONDS = 60.0
#: The wait before a dead worker process is started again; doubled per recent death.
FIRST_BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
#: How long a restarted worker process may take to answer ``/healthz`` before it counts as dead.
RESTART_START_SECONDS = 120.0


class Deaths:
    """The recent deaths of a replica's worker processes (``record`` one: how long to wait
    before the next start, or None once they are too many)."""

    def __init__(self, limit: int = DEATH_LIMIT, window: float = DEATH_WINDOW_SECONDS) -> None:
        self.limit = limit
        self.window = window
        self.times: deque[float] = deque()

    def record(self, now: float) -> float | None:
        """Count a death at ``now`` (monotonic seconds); the backoff, or None: give up."""
        self.times.append(now)
        while self.times and self.times[0] <= now - self.window:
            self.times.popleft()
        if len(self.times) >= self.limit:
            return None
        return min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (len(self.times) - 1))


async def keep_running(group: WorkerGroup, deaths: Deaths | None = None) -> int:
    """Restart each worker process of ``group`` that exits unasked; return once one exited on
    being asked to stop, or died once too often: its exit status."""
    deaths = deaths or Deaths()
    tasks = [asyncio.create_task(_keep(group, worker, deaths)) for worker in group.processes]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        return next(iter(done)).result()
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _keep(group: WorkerGroup, worker: WorkerProcess, deaths: Deaths) -> int:
    while True:
        pid, code = worker.pid, await worker.watch()
        if group.stopping:
            return code
        WORKER_PROCESS_DEATHS.inc()
        delay = deaths.record(time.monotonic())
        if delay is None:
            log.error(
                "worker process %s exited with status %d, %d deaths within %.0f s: the replica stops",
                pid,
                code,
                deaths.limit,
                deaths.window,
            )
            return code
        log.error(
            "worker process %s exited with status %d: starting another in %.0f s (its jobs are "
            "claimed once stale; this process goes on acking)",
            pid,
            code,
            delay,
        )
        await _restart(group, worker, delay)
        if worker.proc is None:
            return 0  # asked to stop before it was started again


async def _restart(group: WorkerGroup, worker: WorkerProcess, delay: float) -> None:
    """Start ``worker`` again after ``delay``; its health counts once it answers. A start that
    fails or hangs comes back as the next death (``worker.watch`` returns at once)."""
    worker.restarting = True
    await worker.close()
    worker.proc = None
    await asyncio.sleep(delay)
    if group.stopping:
        return
    worker.start()
    try:
        await worker.wait_started(RESTART_START_SECONDS)
    except WorkerExited:
        return
    except TimeoutError:
        log.error(  # its death is the next one counted
            "the worker process started again did not answer within %.0f s: killing it", RESTART_START_SECONDS
        )
        with contextlib.suppress(ProcessLookupError):
            if worker.proc is not None:
                worker.proc.kill()
        return
    worker.restarting = False


def planned_worker_processes(config: GatewayConfig) -> int:
    """How many worker processes this replica starts: ``worker_processes``, but one with a
    checkpointer several processes cannot share (said once, at WARNING)."""
    count = worker_process_count(config.worker_processes)
    url = config.agent.checkpointer_url or ""
    if count > 1 and url.startswith("memory:"):
        log.warning(
            "checkpointer memory:// lives in one process's memory: starting 1 worker process, not %d "
            "(a click would reach a process without its question); use SQLite or PostgreSQL for more",
            count,
        )
        return 1
    return count
