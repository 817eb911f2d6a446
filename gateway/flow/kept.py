"""Messages kept on the replica's disk: a platform's last delivery met by a store outage.

Most platforms redeliver a webhook answered 503 for hours, so a Redis outage only delays their
messages. Slack retries an Events API event three times (at once, after about a minute, after
about five) and then drops it. An adapter marks such a delivery ``InboundMessage.last_delivery``;
when the store cannot take it (unreachable, after the blip the request waits out), the core keeps
exactly what ``Store.accept_job`` would have received in a local SQLite file instead and the
webhook is acknowledged. Every other delivery met by the outage is refused as before.

The file (``spool-<bot_id>.sqlite3`` in the data directory, one per replica) is written in WAL
mode with ``synchronous=FULL``: once the webhook is acknowledged, the job is on disk. SQLite is
called off the event loop (``asyncio.to_thread``, an fsync can block), through one connection
held by one call at a time. The drain runs in the
process that receives messages, from its start (a replica restarted after an outage finds its
file) to its stop: while the file holds jobs it waits for the store's ``PING``, then accepts
each job into the store in arrival order and deletes it from the file only once the store took
it. The accept deduplicates by the event's id, so a job kept here and delivered another way too
runs once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from clarigate.agent.at_rest import private_file
from clarigate.gateway.boundary.outage import unreachable
from clarigate.gateway.runtime import metrics
from clarigate.gateway.store.base import Store

log = logging.getLogger(__name__)

#: Seconds between two ``PING``s while the store is down and jobs are kept.
PROBE_SECONDS = 1.0
#: The longest wait between two tries of a job the store refused for another reason (a bug).
MAX_BACKOFF_SECONDS = 60.0
#: Jobs read from the file at a time.
BATCH = 50

_SCHEMA = "CREATE TABLE IF NOT EXISTS kept (seq INTEGER PRIMARY KEY AUTOINCREMENT, platform TEXT, job TEXT)"


def spool_path(data_dir: str, bot_id: str) -> Path:
    """The file of kept jobs in the data directory (one per bot, should bots share a directory)."""
    return Path(data_dir) / f"spool-{bot_id}.sqlite3"


class Spool:
    """The SQLite file: jobs in arrival order (``seq``), each ``accept_job``'s keyword arguments.

    One connection, opened by the first call that writes or finds the file, kept until ``close``
    (or an SQLite error: the next call opens it afresh). Calls come from worker threads, one at a
    time: a lock holds each whole call, its transaction included.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _using(self) -> Iterator[sqlite3.Connection]:
        """The connection, held alone for one call (the file and its table made if need be)."""
        with self._lock:
            if self._db is None:
                self._db = self._connect()
            db = self._db
            try:
                yield db
            except sqlite3.Error:
                self._db = None
                db.close()
                raise

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(private_file(self.path), timeout=10.0, check_same_thread=False)
        try:
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=FULL")  # a commit is on disk when it returns
            db.execute(_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db

    def keep(self, platform: str, job: dict[str, Any]) -> None:
        """Append one job (blocking: call through ``asyncio.to_thread``)."""
        with self._using() as db, db:
            db.execute("INSERT INTO kept (platform, job) VALUES (?, ?)", (platform, json.dumps(job)))

    def oldest(self, limit: int) -> list[tuple[int, str, dict[str, Any]]]:
        """Up to ``limit`` jobs, oldest first: (seq, platform, job); none when there is no file."""
        with self._lock:
            if self._db is None and not self.path.exists():
                return []
        with self._using() as db:
            query = "SELECT seq, platform, job FROM kept ORDER BY seq LIMIT ?"
            rows = db.execute(query, (limit,)).fetchall()
        return [(seq, platform, json.loads(job)) for seq, platform, job in rows]

    def remove(self, seq: int) -> None:
        """Delete one job (the store has taken it)."""
        with self._using() as db, db:
            db.execute("DELETE FROM kept WHERE seq = ?", (seq,))

    def close(self) -> None:
        """Close the connection (once a call in flight is done)."""
        with self._lock:
            db, self._db = self._db, None
        if db is not None:
            db.close()


class KeptJobs:
    """Keeps jobs the store could not take and hands them to it once it answers (module docstring).

    ``track``: called with each job's inbound id when it is kept and when the store took it (the
    gateway's ``drain`` waits for it).
    """

    def __init__(self, path: Path, store: Store, track: Callable[[str], None]) -> None:
        self.spool = Spool(path)
        self.store = store
        self.track = track
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._keeping = False  # jobs kept since the last drain (the INFO line is said once)

    async def accept(self, last_delivery: bool, platform: str, **job: Any) -> bool | None:
        """``store.accept_job(**job)``; when the store is unreachable and this is the platform's
        last delivery, the job kept on disk instead: None. Anything else raises as it did."""
        try:
            return await self.store.accept_job(**job)
        except Exception as exc:
            if not (last_delivery and unreachable(exc)):
                raise
        await asyncio.to_thread(self.spool.keep, platform, job)
        metrics.kept_on_disk(platform).inc()
        if not self._keeping:
            self._keeping = True
            log.info(
                "the store is unreachable: the %s event %s (its last delivery) was kept on disk, "
                "as are the next ones, until the store answers",
                platform,
                job["inbound_id"],
            )
        else:
            log.debug("the store is unreachable: %s kept on disk", job["inbound_id"])
        self.track(job["inbound_id"])
        self._wake.set()
        return None

    def start(self) -> None:
        """Start the drain; it looks at the file at once (jobs kept before a restart)."""
        if self._task is None:
            self._wake.set()
            self._task = asyncio.create_task(self._run(), name="kept-jobs")

    async def stop(self) -> None:
        """Stop the drain and close the file; the jobs not yet taken stay there for the next start."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await asyncio.to_thread(self.spool.close)

    async def _run(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                drained = await self._drain()
            except Exception:  # the file unreadable (a bug, a full or broken disk): tried again later
                log.error("queueing the events kept on disk failed", exc_info=True)
                self._wake.set()
                await asyncio.sleep(MAX_BACKOFF_SECONDS)
                continue
            if drained:
                counts = ", ".join(f"{n} {platform}" for platform, n in sorted(drained.items()))
                log.info("the store answers: events kept on disk queued (%s)", counts)
            self._keeping = False

    async def _drain(self) -> Counter[str]:
        """Hand every kept job to the store, oldest first, waiting while it does not answer."""
        drained: Counter[str] = Counter()
        backoff = PROBE_SECONDS
        while jobs := await asyncio.to_thread(self.spool.oldest, BATCH):
            if not await self.store.ping():
                await asyncio.sleep(PROBE_SECONDS)
                continue
            for seq, platform, job in jobs:
                if not await self._hand_over(job, backoff):
                    backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                    break
                backoff = PROBE_SECONDS
                await asyncio.to_thread(self.spool.remove, seq)
                drained[platform] += 1
        return drained

    async def _hand_over(self, job: dict[str, Any], backoff: float) -> bool:
        """Accept one kept job into the store; False (after a pause) when it could not."""
        try:
            fresh = await self.store.accept_job(**job)
        except Exception as exc:
            if not unreachable(exc):  # a bug: kept, tried again later
                log.error("queueing the kept event %s failed", job["inbound_id"], exc_info=exc)
            await asyncio.sleep(backoff)
            return False
        log.debug("kept event %s %s", job["inbound_id"], "queued" if fresh else "queued already")
        self.track(job["inbound_id"])
        return True
