"""Checkpointers from ``CHECKPOINTER_URL``: where agent threads are kept between turns.

- unset: a SQLite file ``checkpoints.sqlite`` under the data directory (AsyncSqliteSaver);
- ``sqlite:///abs/path.db`` (or ``sqlite:////abs/path.db``) or ``sqlite:relative.db``: that file;
- ``postgresql://…`` (or ``postgres://…``): AsyncPostgresSaver on a connection pool,
  tables created on open; share it between gateway replicas;
- ``memory://``: in process memory, gone on exit (tests, benchmarks).

The Redis checkpointer (``langgraph-checkpoint-redis``) is not offered here: it needs
Redis with the JSON and Search modules (Redis 8 built with them, or Redis Stack),
which the plain Redis 7 that holds the gateway's state does not have.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from clarigate.agent.at_rest import private_file

if TYPE_CHECKING:  # LangGraph is imported when a checkpointer opens: the settings check URLs without it
    from langgraph.checkpoint.base import BaseCheckpointSaver

DEFAULT_SQLITE_FILE = "checkpoints.sqlite"

#: What CHECKPOINTER_URL takes, as a refusal names it.
SCHEMES = "sqlite:///path (or sqlite:relative.db), postgresql://… (or postgres://…) or memory://"


def sqlite_path(url: str | None, data_dir: str) -> Path | None:
    """The SQLite file ``url`` names (the default file when unset), or None if it is not SQLite."""
    if url is None or url.strip() == "":
        return Path(data_dir) / DEFAULT_SQLITE_FILE
    if url.startswith("sqlite://"):
        rest = url[len("sqlite://") :]
        return Path(rest[1:] if rest.startswith("//") else rest)  # sqlite:////abs as well
    if url.startswith("sqlite:"):
        return Path(url[len("sqlite:") :])
    return None


def url_problem(url: str | None) -> str | None:
    """Why no checkpointer can be opened from ``url`` whatever is there (a scheme not offered), in
    one line naming CHECKPOINTER_URL and what it takes; None when ``open_checkpointer`` may try it.
    Only the scheme is quoted: the rest of the URL may hold a password (this line reaches the
    terminal of ``clarigate chat`` and ``serve``'s stderr as it is, past the log redactor)."""
    if (
        url is None
        or sqlite_path(url, ".") is not None
        or url.startswith(("postgresql://", "postgres://", "memory:"))
    ):
        return None
    if url.startswith(("redis://", "rediss://")):
        return (
            "CHECKPOINTER_URL=redis://… is not offered: the Redis checkpointer needs Redis with the JSON "
            f"and Search modules (Redis 8 or Redis Stack); CHECKPOINTER_URL takes {SCHEMES}"
        )
    scheme = f"{url.partition(':')[0]}:" if ":" in url else "none"
    return f"CHECKPOINTER_URL: unknown scheme {scheme!r}; it takes {SCHEMES}"


@dataclass
class Checkpointer:
    """An open saver and what closes it."""

    saver: BaseCheckpointSaver
    kind: str  # "sqlite" | "postgres" | "memory"
    _stack: AsyncExitStack = field(default_factory=AsyncExitStack)

    async def ping(self) -> bool:
        """True when the database answers a trivial query."""
        try:
            if self.kind == "sqlite":
                cursor = await self.saver.conn.execute("SELECT 1")  # type: ignore[attr-defined]
                await cursor.close()
            elif self.kind == "postgres":
                async with self.saver.conn.connection() as conn:  # type: ignore[attr-defined]
                    await conn.execute("SELECT 1")
        except Exception:  # any failure means "not ready", which is what /readyz reports
            return False
        return True

    async def prune(self, thread_id: str) -> None:
        """Keep only the latest checkpoint of each namespace of ``thread_id`` (and what it uses).

        Every checkpoint holds the thread's whole history, so keeping them all grows storage with
        the square of the turns; resuming needs only the latest (with its pending writes).
        """
        if self.kind == "postgres":
            await self.saver.aprune([thread_id], strategy="keep_latest")
        elif self.kind == "sqlite":
            await _prune_sqlite(self.saver, thread_id)
        elif self.kind == "memory":
            _prune_memory(self.saver, thread_id)

    async def aclose(self) -> None:
        """Close connections (idempotent)."""
        await self._stack.aclose()


async def _prune_sqlite(saver: Any, thread_id: str) -> None:
    """``prune`` on ``AsyncSqliteSaver``'s tables (``checkpoints``, ``writes``)."""
    async with saver.lock:
        await saver.conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id < ("
            " SELECT MAX(latest.checkpoint_id) FROM checkpoints AS latest"
            " WHERE latest.thread_id = checkpoints.thread_id"
            " AND latest.checkpoint_ns = checkpoints.checkpoint_ns)",
            (thread_id,),
        )
        await saver.conn.execute(
            "DELETE FROM writes WHERE thread_id = ? AND NOT EXISTS ("
            " SELECT 1 FROM checkpoints AS kept WHERE kept.thread_id = writes.thread_id"
            " AND kept.checkpoint_ns = writes.checkpoint_ns AND kept.checkpoint_id = writes.checkpoint_id)",
            (thread_id,),
        )
        await saver.conn.commit()


def _prune_memory(saver: Any, thread_id: str) -> None:
    """``prune`` on ``InMemorySaver``'s dictionaries (checkpoints, writes, channel blobs).

    Only this thread's entries are visited: the blobs dropped are those the removed checkpoints
    name and the latest does not (every blob is named by the checkpoint that wrote it), so a
    prune does not grow with the number of threads the saver holds.
    """
    dropped: set[tuple[str, str, Any]] = set()
    kept: set[tuple[str, str, Any]] = set()
    for namespace, checkpoints in saver.storage.get(thread_id, {}).items():
        if not checkpoints:
            continue
        latest = max(checkpoints)  # checkpoint ids sort by time
        for checkpoint_id in [cid for cid in checkpoints if cid != latest]:
            old = saver.serde.loads_typed(checkpoints.pop(checkpoint_id)[0])
            dropped.update((namespace, ch, v) for ch, v in old["channel_versions"].items())
            saver.writes.pop((thread_id, namespace, checkpoint_id), None)
        checkpoint = saver.serde.loads_typed(checkpoints[latest][0])
        kept.update((namespace, ch, v) for ch, v in checkpoint["channel_versions"].items())
    for namespace, channel, version in dropped - kept:
        saver.blobs.pop((thread_id, namespace, channel, version), None)


async def open_checkpointer(url: str | None, data_dir: str) -> Checkpointer:
    """Open the checkpointer ``url`` names; ``ValueError`` for an unknown scheme (``url_problem``)."""
    problem = url_problem(url)
    if problem is not None:
        raise ValueError(problem)
    path = sqlite_path(url, data_dir)
    if path is not None:
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        if str(path) != ":memory:":
            private_file(path)  # the conversations it holds are the owner's alone
        stack = AsyncExitStack()
        saver = await stack.enter_async_context(AsyncSqliteSaver.from_conn_string(str(path)))
        await saver.setup()
        return Checkpointer(saver, "sqlite", stack)
    assert url is not None
    if url.startswith(("postgresql://", "postgres://")):
        return await _open_postgres(url)
    from langgraph.checkpoint.memory import InMemorySaver  # memory:, the only one left

    return Checkpointer(InMemorySaver(), "memory")


#: The PostgreSQL advisory lock held while the checkpoint tables are set up (any fixed number
#: no other user of the database locks).
SETUP_LOCK = 0x636C6172  # "clar"


async def _take_setup_lock(conn: Any) -> None:
    """Hold ``SETUP_LOCK`` on ``conn``. Tried, not waited for: a session waiting in
    ``pg_advisory_lock`` is a transaction in progress, which a migration's
    ``CREATE INDEX CONCURRENTLY`` waits for, while it waits for the lock that migration holds."""
    while True:
        row = await (await conn.execute("SELECT pg_try_advisory_lock(%s) AS held", (SETUP_LOCK,))).fetchone()
        if row["held"]:
            return
        await asyncio.sleep(0.1)


async def _open_postgres(url: str) -> Checkpointer:
    """AsyncPostgresSaver on a small pool, so concurrent runs do not queue on one connection."""
    from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool = AsyncConnectionPool(
        url,
        min_size=1,
        max_size=10,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True, timeout=10)
    stack = AsyncExitStack()
    stack.push_async_callback(pool.close)
    try:
        saver = AsyncPostgresSaver(pool)  # type: ignore[arg-type]
        # one process at a time: the processes of replicas starting together would otherwise run
        # the same migration at once on a fresh database, and all but one fail on its key
        async with pool.connection() as conn:
            await _take_setup_lock(conn)
            try:  # on the lock's connection: the pool stays at one connection
                await AsyncPostgresSaver(conn).setup()  # type: ignore[arg-type]
            finally:
                await conn.execute("SELECT pg_advisory_unlock(%s)", (SETUP_LOCK,))
    except BaseException:
        await stack.aclose()
        raise
    return Checkpointer(saver, "postgres", stack)
