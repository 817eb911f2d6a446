"""Upkeep removes stream consumers idle a day with no job, as deploy/README.md says, and no sooner."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.jobs.upkeep import Upkeep
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests

HOUR = 3600.0


async def test_a_consumer_quiet_for_hours_stays_and_one_silent_a_day_goes() -> None:
    """Redis before 7.2 counts a consumer idle from the last job it was handed: a live replica of
    a quiet bot looks idle for hours. deploy/README.md: a running gateway "removes consumers idle a
    day that hold no job" (upkeep removed them after an hour)."""
    now = [1_000_000.0]
    store = MemoryStore("upkeep-consumers", clock=lambda: now[0])
    await store.accept_job("d1", "message", "in-1", "chat-1", {}, 60)
    (job,) = await store.read_jobs("quiet-replica", count=1, block_ms=0)
    await store.complete_job(job)  # holds nothing now
    upkeep = Upkeep(config_for_tests(), store, ScriptedRunner(), "me")

    now[0] += 6 * HOUR
    await upkeep.run_once()
    assert await store.remove_idle_consumers(0, keep="me") == ["quiet-replica"]  # it was still there

    await store.read_jobs("quiet-replica", count=1, block_ms=0)  # back, as a live replica's next read
    now[0] += 24 * HOUR
    await upkeep.run_once()
    assert await store.remove_idle_consumers(0, keep="me") == []  # upkeep removed it
