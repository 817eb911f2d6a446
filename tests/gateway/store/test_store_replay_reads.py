"""Reads of the work queue whose reply was lost (``test_store_replay``'s proxy): a blocking read
returns its entries, and entries other workers hold are not handed out again."""

from __future__ import annotations

import asyncio

from . import test_store_replay
from .test_store_replay import Replay, _two_jobs

replay = test_store_replay.replay  # the fixture: a store behind the reply-dropping proxy


async def test_a_blocking_read_whose_reply_was_lost_returns_its_entries(replay: Replay) -> None:
    r = replay
    await r.store.read_jobs("me", 10, 0)
    r.lose_reply_to("XREADGROUP")
    waiting = asyncio.create_task(r.store.read_jobs("me", 10, 2000))
    await asyncio.sleep(0.1)  # the read waits in Redis when the job arrives
    await r.store.accept_job("e1", "message", "e1", "k", {}, 60)
    assert [j.inbound_id for j in await waiting] == ["e1"]
    assert r.proxy.dropped == 1


async def test_entries_other_workers_hold_are_not_handed_out_again(replay: Replay) -> None:
    r = replay
    await _two_jobs(r)
    (running,) = await r.store.read_jobs("me", 1, 0)  # a worker of this replica runs it
    r.lose_reply_to("XREADGROUP")
    assert [j.inbound_id for j in await r.store.read_jobs("me", 10, 0)] == ["e2"]
    assert running.inbound_id == "e1"
