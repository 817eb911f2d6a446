"""The shared pace of live updates: one update a window per scope across processes, through the
store; each process on its own when the store does not answer."""

from __future__ import annotations

import asyncio
import time

import pytest

from clarigate.adapters.pacing import Budget, SharedPace
from clarigate.gateway.boundary.port import LiveSkipped

from .live_pace import SharedRedis

HOUR = Budget(1, 3600.0)  # one update an hour: a second one in the window waits for the next


class StoreDown:
    """A store that does not answer."""

    async def acquire_lease(self, name: str, holder: str, ttl_seconds: int) -> bool:
        raise ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


async def held(pace: SharedPace, scope: str) -> bool:
    """True when the update waits (for the next window) rather than going out now."""
    try:
        await asyncio.wait_for(pace.slot(scope, HOUR), 0.5)
    except TimeoutError:
        return True
    return False


async def test_processes_on_one_store_share_each_window(shared_redis: SharedRedis):
    stores = shared_redis.stores(2)
    first, second = (SharedPace(lambda store=store: store, "slack") for store in stores)
    assert await first.slot("T1:chat.update", HOUR)
    assert await held(second, "T1:chat.update")  # the other process: the window is taken
    assert await second.slot("T2:chat.update", HOUR)  # another workspace has its own


async def test_with_the_store_down_each_process_paces_itself():
    down = StoreDown()
    first, second = SharedPace(lambda: down, "slack"), SharedPace(lambda: down, "slack")  # type: ignore[arg-type,return-value]
    assert await first.slot("T1:chat.update", HOUR)  # updates go on
    assert await held(first, "T1:chat.update")  # paced in this process
    assert await second.slot("T1:chat.update", HOUR)  # another process counts its own


async def test_an_update_that_finds_no_room_says_when_the_next_window_begins(shared_redis: SharedRedis):
    [store] = shared_redis.stores(1)
    second = Budget(1, 1.0)
    now = int(time.time())
    for window in range(now, now + 4):  # this window and the next ones taken by other processes
        assert await store.acquire_lease(f"live-pace:T1:chat.update:{window}", "another", 10)
    pace = SharedPace(lambda: store, "slack")
    with pytest.raises(LiveSkipped) as skipped:
        await pace.take("T1:chat.update", second)  # this window, then the next: both taken
    assert 0 < skipped.value.retry_in <= second.window
    assert time.time() + skipped.value.retry_in == pytest.approx(int(time.time()) + 1, abs=0.05)
