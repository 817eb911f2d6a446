"""A checkpointer outage is waited out: the message is kept, the person told once at most, and the
answer comes when the database is back; no apology. Real PostgreSQL (through a proxy that is cut
and restored) and a real SQLite file locked by another connection."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import psycopg
import pytest
from prometheus_client import REGISTRY

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol.catalog import text as notice
from clarigate.gateway.runners.base import AgentUnavailable
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.outages import checkpointer_unreachable, outage_is_unavailable
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.tcp_proxy import OutageProxy

KEPT = notice("agent_unavailable", "en")
SORRY = notice("run_failed", "en")


def checkpointer_errors() -> float:
    return REGISTRY.get_sample_value("clarigate_checkpointer_errors_total") or 0.0


async def wait_until(condition, seconds: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    for _ in range(int(seconds * 20)):
        if condition():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition never held")


async def test_postgres_lost_mid_service_is_waited_out_and_the_message_answered_once(
    tmp_path: Path, make_gateway
):
    proxy = OutageProxy(5432)
    await proxy.start()
    url = f"postgresql://postgres@127.0.0.1:{proxy.port}/test"
    runner = LangGraphRunner(AgentSettings(model="offline", checkpointer_url=url, data_dir=str(tmp_path)))
    gateway, chat = await make_gateway(MemoryStore("pg-outage"), runner)
    try:
        before = checkpointer_errors()
        await proxy.cut()  # PostgreSQL restarts: the pool's connection is lost, new ones refused
        await chat.say("hello there")
        await wait_until(lambda: checkpointer_errors() > before)  # the run met the outage
        await proxy.restore()
        await gateway.drain(timeout=60)

        texts = chat.texts()
        assert SORRY not in texts  # no apology
        assert KEPT not in texts  # back within a few seconds: nothing to tell
        assert len(texts) == 1 and texts[0].strip()  # the answer, once
        assert await runner.ping()
    finally:
        await runner.aclose()
        await proxy.cut()


async def test_postgres_down_longer_is_told_once_while_it_waits_and_answered_when_back(
    tmp_path: Path, make_gateway
):
    proxy = OutageProxy(5432)
    await proxy.start()
    url = f"postgresql://postgres@127.0.0.1:{proxy.port}/test"
    runner = LangGraphRunner(AgentSettings(model="offline", checkpointer_url=url, data_dir=str(tmp_path)))
    gateway, chat = await make_gateway(MemoryStore("pg-down"), runner)
    try:
        before = checkpointer_errors()
        await proxy.cut()  # PostgreSQL is down, and stays down a while
        await chat.say("hello there")
        # the run waits on the pool for a connection; once the outage outlasts a few seconds the
        # person is told, before that wait ends (the pool's own timeout is far longer)
        await wait_until(lambda: KEPT in chat.texts())
        assert checkpointer_errors() - before == 1  # told while the retry still waits
        await proxy.restore()
        await gateway.drain(timeout=60)

        texts = chat.texts()
        assert SORRY not in texts
        assert texts[0] == KEPT and len(texts) == 2 and texts[1].strip()  # told once, then the answer
    finally:
        await runner.aclose()
        await proxy.cut()


async def test_a_locked_sqlite_file_keeps_the_message_tells_once_and_answers_when_free(
    tmp_path: Path, make_gateway
):
    path = tmp_path / "checkpoints.sqlite"
    runner = LangGraphRunner(
        AgentSettings(model="offline", checkpointer_url=f"sqlite:///{path}", data_dir=str(tmp_path))
    )
    gateway, chat = await make_gateway(MemoryStore("sqlite-locked"), runner)
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another process holds the file (a backup, a migration)
        await chat.say("hello there")
        await wait_until(lambda: KEPT in chat.texts())  # the lock outlasts a few seconds: told
        with pytest.raises(TimeoutError):
            await gateway.drain(timeout=1)  # and the message is kept, not failed
        holder.execute("ROLLBACK")
        await gateway.drain(timeout=60)

        texts = chat.texts()
        assert SORRY not in texts
        assert texts.count(KEPT) == 1  # told once, however many deliveries it took
        assert texts[0] == KEPT and len(texts) == 2 and texts[1].strip()  # then the answer
    finally:
        holder.close()
        await runner.aclose()


def test_what_counts_as_an_outage_and_what_does_not():
    assert checkpointer_unreachable(psycopg.OperationalError("server closed the connection unexpectedly"))
    assert checkpointer_unreachable(sqlite3.OperationalError("database is locked"))
    assert checkpointer_unreachable(ConnectionRefusedError(111, "refused"))
    wrapped = RuntimeError("writing the checkpoint failed")
    wrapped.__cause__ = psycopg.OperationalError("the connection is lost")
    assert checkpointer_unreachable(wrapped)
    # a schema the database refuses, or a bug: permanent
    assert not checkpointer_unreachable(psycopg.errors.UndefinedTable('no relation "checkpoints"'))
    assert not checkpointer_unreachable(sqlite3.OperationalError("no such table: checkpoints"))
    assert not checkpointer_unreachable(KeyError("messages"))


def test_an_outage_is_raised_as_the_agent_unavailable_and_anything_else_as_it_is():
    with pytest.raises(AgentUnavailable), outage_is_unavailable("a run"):
        raise sqlite3.OperationalError("database is locked")
    with pytest.raises(psycopg.errors.UndefinedColumn), outage_is_unavailable("a run"):
        raise psycopg.errors.UndefinedColumn("column does not exist")
