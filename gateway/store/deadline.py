"""A webhook's store work under one wall-clock deadline, so a store blip is waited out within the
ack and a hung or slow store never holds the ack past what the platform waits.

The HTTP server wraps each request in ``store_deadline``; the Redis store sends the calls that
request's task makes over its webhook client (``connection.WEBHOOK_RETRIES``: refused
connections re-sent for about 2 s, by redis-py's own retry) and gives up on them when the
deadline passes (``StoreDeadlinePassed``, a redis-py ``TimeoutError``: the outage answer).
Tasks a request starts (``asyncio.create_task`` copies the context) are not bound by it: they
outlive the ack, and their store calls go as any other's.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from redis.exceptions import TimeoutError as RedisTimeoutError


@dataclass(frozen=True)
class Deadline:
    """When (``loop.time()``) the store calls of ``task`` give up, ``seconds`` after they began."""

    task: asyncio.Task[Any] | None
    at: float
    seconds: float


_current: ContextVar[Deadline | None] = ContextVar("store_deadline", default=None)


class StoreDeadlinePassed(RedisTimeoutError):
    """The store did not answer a request's calls within its deadline: unreachable, as a
    redis-py ``TimeoutError`` is (``connection.unreachable``)."""


@contextmanager
def store_deadline(seconds: float) -> Iterator[None]:
    """The store calls this task makes within the block end within ``seconds`` of its start."""
    loop = asyncio.get_running_loop()
    token = _current.set(Deadline(asyncio.current_task(), loop.time() + seconds, seconds))
    try:
        yield
    finally:
        _current.reset(token)


def current_deadline() -> Deadline | None:
    """The deadline of the running task's store calls, or None (not handling a request)."""
    deadline = _current.get()
    if deadline is None or deadline.task is not asyncio.current_task():
        return None
    return deadline
