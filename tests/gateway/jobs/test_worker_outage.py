"""A worker loop that cannot reach the store says so once, and once more when it works again."""

from __future__ import annotations

import asyncio
import logging

from prometheus_client import REGISTRY
from redis.exceptions import ConnectionError as RedisConnectionError

from clarigate.gateway.store.memory import MemoryStore


class FlakyStore(MemoryStore):
    """Reading jobs fails while ``down`` is set, as with Redis unreachable."""

    down = True
    attempts = 0

    async def read_jobs(self, *args, **kwargs):
        if self.down:
            self.attempts += 1
            raise RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
        return await super().read_jobs(*args, **kwargs)


async def test_an_outage_logs_two_lines_not_one_per_try(make_gateway, caplog):
    errors_before = REGISTRY.get_sample_value("clarigate_store_errors_total", {"operation": "read_jobs"}) or 0
    store = FlakyStore("outage")
    caplog.set_level(logging.INFO, logger="clarigate.gateway.jobs.worker")
    gateway, chat = await make_gateway(store)
    for _ in range(300):
        if store.attempts >= 3:
            break
        await asyncio.sleep(0.02)
    assert gateway.pool.reading.failing
    store.down = False
    await chat.say("hello")
    await gateway.drain(timeout=10)
    assert chat.texts() == ["You said: hello"]

    lines = [
        r
        for r in caplog.records
        if r.name == "clarigate.gateway.jobs.worker" and "reading jobs" in r.getMessage()
    ]
    assert [r.levelname for r in lines] == ["WARNING", "INFO"]
    assert "Connection refused" in lines[0].getMessage() and lines[0].exc_info is None
    assert f"works again after {store.attempts} failure(s)" in lines[1].getMessage()
    assert not gateway.pool.reading.failing
    errors = REGISTRY.get_sample_value("clarigate_store_errors_total", {"operation": "read_jobs"})
    assert errors == errors_before + store.attempts  # every failure is counted, though logged once
