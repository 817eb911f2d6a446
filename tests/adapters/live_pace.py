"""Driving live messages as the core does, to count what reaches a platform per budget window:
several "processes" (adapters, each on its own store client) sharing one real Redis."""

from __future__ import annotations

import asyncio
import os
import uuid
from typing import Any

from redis.asyncio import Redis

from clarigate.gateway.boundary.messages import Conversation, LiveView, MessageRef
from clarigate.gateway.store.redis import RedisStore

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


class SharedRedis:
    """Store clients on one Redis prefix, as the worker processes of one bot have: ``stores(n)``
    gives ``n`` of them; closed, and the prefix's keys deleted, once the test is over."""

    def __init__(self) -> None:
        self.prefix = f"test-pace-{uuid.uuid4().hex[:12]}"
        self.made: list[RedisStore] = []

    def stores(self, count: int) -> list[RedisStore]:
        made = [RedisStore(REDIS_URL, self.prefix) for _ in range(count)]
        self.made.extend(made)
        return made

    async def close(self) -> None:
        for store in self.made:
            await store.close()
        client = Redis.from_url(REDIS_URL)
        keys = [key async for key in client.scan_iter(match=f"{self.prefix}:*", count=500)]
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
    """The most calls one slot a window lets through over the calls' span: the windows the span
    covers, the two it starts and ends in partly, and one for the time a call takes to arrive."""
    span = max(times) - min(times)
    return int(span // window) + 3
