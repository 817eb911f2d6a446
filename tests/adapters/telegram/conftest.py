"""Fixtures for the Telegram adapter tests: the fake Bot API and a gateway wired to it."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from redis.asyncio import Redis

from clarigate.adapters.telegram import live
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore

from .fake_bot_api import FakeBotApi
from .harness import TelegramBench, open_bench

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
async def redis_prefix() -> AsyncIterator[str]:
    """A key prefix of this test's own; its Redis keys are deleted afterwards."""
    prefix = f"test-tg-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


BenchFactory = Callable[..., Awaitable[TelegramBench]]


@pytest.fixture
def quick_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    """Group edits every 0.5 s instead of 3 s, for tests about something else than the pace."""
    monkeypatch.setattr(live, "GROUP_EDIT_INTERVAL", 0.5)


@pytest.fixture
async def bench(bot_api: FakeBotApi) -> AsyncIterator[BenchFactory]:
    """Build started gateways with the Telegram adapter (memory store unless one is given)."""
    opened: list[TelegramBench] = []
    stores: list[Any] = []

    async def build(runner: ScriptedRunner | None = None, store: Any = None, **config: Any) -> TelegramBench:
        if store is None:
            store = MemoryStore(f"test-{uuid.uuid4().hex[:8]}")
            stores.append(store)
        made = await open_bench(bot_api, store, runner or ScriptedRunner(), **config)
        opened.append(made)
        return made

    yield build
    for made in opened:
        await made.close()
    for store in stores:
        await store.close()


def redis_store(prefix: str) -> RedisStore:
    """A Redis store under ``prefix`` (the caller closes it)."""
    return RedisStore(REDIS_URL, prefix)
