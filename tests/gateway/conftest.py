"""Store fixtures shared by the gateway tests: both implementations, one unique prefix per test."""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from clarigate.gateway.runtime.config import ENV_NAMES
from clarigate.gateway.store import Store
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


async def delete_prefix(url: str, prefix: str) -> None:
    """Remove every key under ``prefix`` (a test's leftovers)."""
    client = Redis.from_url(url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


@pytest.fixture
def redis_url() -> str:
    """The real Redis the tests use (127.0.0.1:6379 unless ``TEST_REDIS_URL`` says otherwise)."""
    return REDIS_URL


@pytest.fixture
def store_prefix() -> str:
    """A key prefix no other test uses."""
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest, redis_url: str, store_prefix: str) -> AsyncIterator[Store]:
    """A fresh store of each kind under a unique prefix; Redis keys are deleted afterwards."""
    if request.param == "memory":
        memory = MemoryStore(store_prefix)
        yield memory
        await memory.close()
        return
    redis_store = RedisStore(redis_url, store_prefix)
    try:
        yield redis_store
    finally:
        await redis_store.close()
        await delete_prefix(redis_url, store_prefix)


@pytest.fixture
def clean_environment(monkeypatch, tmp_path):
    """No operator variables from the machine; agent files in a temporary folder; no waits."""
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("CLARIGATE_STARTUP_WAIT_SECONDS", "0")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
