"""Replicas starting together on a fresh PostgreSQL database all open the checkpointer.

Every worker process of every replica sets the checkpoint tables up when it starts. On a database
that has none yet, the cluster experiment (bench/cluster_faults.py) saw two of them run the same
migration at once: one failed on the migrations table's key and its replica exited at start.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from clarigate.agent.checkpoint import open_checkpointer

from .test_checkpoint import _postgres_reachable

SERVER = "postgresql://postgres@127.0.0.1:5432"

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not _postgres_reachable(), reason="PostgreSQL at 127.0.0.1:5432 is not reachable"),
]


@pytest.fixture
def fresh_database() -> Iterator[str]:
    """A database of this test with no checkpoint tables (dropped afterwards)."""
    name = f"clarigate_test_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    yield f"{SERVER}/{name}"
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


async def test_eight_processes_starting_at_once_on_a_fresh_database_all_open_it(fresh_database, tmp_path):
    opened = await asyncio.gather(
        *(open_checkpointer(fresh_database, str(tmp_path)) for _ in range(8)), return_exceptions=True
    )
    try:
        assert [type(o).__name__ for o in opened] == ["Checkpointer"] * 8
        async with opened[0].saver.conn.connection() as conn:  # type: ignore[union-attr]
            migrations = await (
                await conn.execute("SELECT count(*) AS n FROM checkpoint_migrations")
            ).fetchone()
        assert migrations["n"] == len(opened[0].saver.MIGRATIONS)  # type: ignore[union-attr]
    finally:
        for checkpointer in opened:
            if not isinstance(checkpointer, BaseException):
                await checkpointer.aclose()
