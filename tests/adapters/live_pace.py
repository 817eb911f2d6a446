"""Driving live messages as the core does, to count what reaches a platform per budget window:
several "processes" (adapters, each on its own store client) sharing one real Redis."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from redis.asyncio import Redis

from clarigate.gateway.boundary.messages import Conversation, LiveView, MessageRef
from clarigate.gateway.store.redis import RedisStore

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@asynccontextmanager
async def redis_stores(count: int) -> AsyncIterator[list[RedisStore]]:
    """``count`` store clients on one Redis prefix, as ``count`` worker processes of one bot have."""
    prefix = f"test-pace-{uuid.uuid4().hex[:12]}"
    stores = [RedisStore(REDIS_URL, prefix) for _ in range(count)]
    try:
        yield stores
    finally:
        for store in stores:
            await store.close()
        client = Redis.from_url(REDIS_URL)
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def live_run(
    adapter: Any, conversation: Conversation, mode: str, updates: int, **view: Any
) -> tuple[MessageRef, int]:
    """A run's live message made, then ``updates`` updates with growing text, each after the
    adapter's ``live_interval`` (as ``clarigate.gateway.flow.live`` paces them). Returns its ref
    and the updates that changed what the message would show."""
    text = "The answer begins"
    ref = await adapter.show_live(conversation, LiveView(mode=mode, text=text, **view), None)
    assert ref is not None
    for index in range(updates):
        await asyncio.sleep(adapter.live_interval(conversation, mode))
        text += f" and grows {index}"
        ref = await adapter.show_live(conversation, LiveView(mode=mode, text=text, **view), ref)
        assert ref is not None
    return ref, updates


def most_in_windows(times: list[float], window: float) -> int:
    """The most calls any run of windows could hold: one a window over the calls' span, and one
    more for the window a call in flight crossed into."""
    span = max(times) - min(times)
    return int(span // window) + 2
