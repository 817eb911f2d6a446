"""A request's store calls under its deadline (``store.deadline``), on the real Redis: a call cut
off by the deadline is the outage error and leaves no connection behind whose late reply a later
call would read; tasks the request starts are not bound by it."""

from __future__ import annotations

import asyncio

import pytest

from clarigate.gateway.store.connection import unreachable
from clarigate.gateway.store.deadline import StoreDeadlinePassed, current_deadline, store_deadline

from ...conftest import RedisStoreFactory


async def test_a_call_cut_off_by_the_deadline_leaves_no_late_reply_behind(redis_stores: RedisStoreFactory):
    store = redis_stores()
    key, waiting = store.keys.seen("value"), store.keys.seen("nothing-here")
    await store._command("SET", key, "the value")
    with store_deadline(0.3):
        with pytest.raises(StoreDeadlinePassed) as cut_off:
            # Redis answers this one (nil) after 1 s: on the same connection, the next call would read it
            await store._command("BLPOP", waiting, 1)
        assert unreachable(cut_off.value)  # the outage answer, not a bug
    await asyncio.sleep(1.2)  # the late reply has arrived, on a connection redis-py dropped
    with store_deadline(2.5):
        assert await store._command("GET", key) == "the value"
    assert await store._command("GET", key) == "the value"


async def test_tasks_a_request_starts_are_not_bound_by_its_deadline():
    async def seen_in_a_task() -> object:
        return current_deadline()

    with store_deadline(2.5):
        own = current_deadline()
        started = await asyncio.create_task(seen_in_a_task())
    assert own is not None and own.seconds == 2.5
    assert started is None and current_deadline() is None
