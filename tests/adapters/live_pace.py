"""Driving live messages as the core does, to count what reaches a platform per budget window:
several "processes" (adapters, each on its own store client) sharing one real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from redis.asyncio import Redis

from clarigate.agent.events import TextDelta
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import LiveView
from clarigate.gateway.boundary.port import LiveSkipped
from clarigate.gateway.flow.live import LiveReply
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


def counted(acquire: Callable[..., Awaitable[bool]], names: list[str]) -> Callable[..., Awaitable[bool]]:
    """A store's ``acquire_lease`` that notes the name of each lease asked for (one Redis round
    trip each) in ``names``."""

    async def acquire_lease(name: str, holder: str, ttl_seconds: int) -> bool:
        names.append(name)
        return await acquire(name, holder, ttl_seconds)

    return acquire_lease


async def live_run(
    adapter: Any, conversation: Conversation, mode: str, updates: int, **view: Any
) -> tuple[MessageRef, int]:
    """A run's live message made (again at the next slot when the budget skips it, as the core
    does), then ``updates`` updates with growing text, each after the adapter's ``live_interval``
    (as ``clarigate.gateway.flow.live`` paces them; one the budget skips leaves its text to the
    next). Returns its ref and the updates that changed what the message would show."""
    text = "The answer begins"
    ref = None
    while ref is None:  # a message the budget had no room for is tried again at the next slot
        try:
            ref = await adapter.show_live(conversation, LiveView(mode=mode, text=text, **view), None)
        except LiveSkipped as skipped:
            await asyncio.sleep(skipped.retry_in)
    for index in range(updates):
        await asyncio.sleep(adapter.live_interval(conversation, mode))
        text += f" and grows {index}"
        with contextlib.suppress(LiveSkipped):  # no room: the next update carries the text
            ref = await adapter.show_live(conversation, LiveView(mode=mode, text=text, **view), ref)
        assert ref is not None
    return ref, updates


async def first_words_together(
    runs: list[tuple[Any, Conversation]], mode: str, arrived: Any, deadline: float, **options: Any
) -> tuple[float, list[MessageRef]]:
    """Live runs driven as the core does (``LiveReply``, "Working…" at once), whose first words
    ("Answer0", "Answer1", …) all come in the same instant; their updates go on until
    ``arrived(words)`` says every run's first words reached the platform, or ``deadline`` seconds
    pass. Returns when the words came and each run's live message."""
    replies = [
        LiveReply(adapter, conversation, "en", mode=mode, working_after=0, **options)
        for adapter, conversation in runs
    ]
    await asyncio.gather(*(reply.start() for reply in replies))
    words = [f"Answer{index}" for index in range(len(runs))]
    came = time.monotonic()  # the fakes note when calls arrive on this clock
    for reply, word in zip(replies, words, strict=True):
        await reply.on_event(TextDelta(f"{word} begins here", "m1"))
    for _ in range(int(deadline / 0.02)):  # the fake platforms are polled (they signal nothing)
        if arrived(words):
            break
        await asyncio.sleep(0.02)
    results = await asyncio.gather(*(reply.finish() for reply in replies))
    assert all(result.ref is not None for result in results)
    return came, [result.ref for result in results if result.ref is not None]


def at_most_one_a_window(times: list[float], window: float) -> bool:
    """True when no stretch of the calls holds more than one slot a window lets through (as
    ``most_in_windows`` counts), whichever calls it starts and ends with."""
    ordered = sorted(times)
    return all(
        last - first + 1 <= most_in_windows(ordered[first : last + 1], window)
        for first in range(len(ordered))
        for last in range(first + 1, len(ordered))
    )


def most_in_windows(times: list[float], window: float) -> int:
    """The most calls one slot a window lets through over the calls' span: the windows the span
    covers, the two it starts and ends in partly, and one for the time a call takes to arrive."""
    span = max(times) - min(times)
    return int(span // window) + 3
