"""A chat thread's replies arrive in the order of its messages when the replica holding some of
its jobs dies (``kill -9``: nothing handed back) and the other takes them over.

Two gateways on one real Redis; the runs are slow, so jobs of the thread are held by the dying
replica (one running, the later ones waiting their turn) while more arrive at the other.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any, ClassVar

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import Outbound, TextReply

from .crash import abandon, eventually

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


class Shared(TestAdapter):
    """Both replicas' adapters write into one chat: what arrives there, in order."""

    arrivals: ClassVar[list[str]] = []

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        if isinstance(item, TextReply):
            Shared.arrivals.append(item.text)
        return await super().send(conversation, item)


def slow(stuck: asyncio.Event | None = None) -> ScriptedRunner:
    async def run(turn: Turn) -> TurnOutput:
        if stuck is not None:
            await stuck.wait()  # this replica dies before the run ends
        await asyncio.sleep(0.05)
        return TurnOutput(replies=[f"re: {turn.text}"])

    return ScriptedRunner(run)


async def test_replies_keep_the_thread_order_across_a_takeover(redis_stores: Any, make_gateway: Any):
    Shared.arrivals = []
    store = redis_stores()
    one, chat = await make_gateway(store, slow(asyncio.Event()), adapter_class=Shared, workers=4)
    for i in range(1, 5):
        await chat.say(f"m{i}")  # one reads them all: m1 runs (stuck), m2..m4 wait their turn
    await eventually(lambda: one.pool.busy == 4)
    two, other = await make_gateway(redis_stores(store.prefix), slow(), adapter_class=Shared, workers=4)
    for i in range(5, 9):
        await other.say(f"m{i}")
    await abandon(one)

    await eventually(lambda: len(Shared.arrivals) >= 8, within=60)
    await asyncio.sleep(0.5)  # nothing more comes

    assert Shared.arrivals == [f"re: m{i}" for i in range(1, 9)]


async def test_a_later_job_claimed_first_waits_for_the_earlier_one(redis_stores: Any, make_gateway: Any):
    """The dead replica's later job goes stale first (the earlier one was renewed last): the
    replica that claims it does not run it before the earlier one."""
    Shared.arrivals = []
    store = redis_stores()
    one, chat = await make_gateway(store, slow(asyncio.Event()), adapter_class=Shared, workers=4)
    await chat.say("m1")
    await chat.say("m2")
    await eventually(lambda: one.pool.busy == 2)
    await abandon(one)
    two, other = await make_gateway(redis_stores(store.prefix), slow(), adapter_class=Shared, workers=4)
    await other.say("m3")

    await eventually(lambda: len(Shared.arrivals) >= 3, within=60)
    await asyncio.sleep(0.5)

    assert Shared.arrivals == ["re: m1", "re: m2", "re: m3"]


async def test_jobs_read_again_after_redis_lost_their_read_run_once_in_order(
    redis_stores: Any, make_gateway: Any
):
    """Redis restarts and loses the read of jobs this replica is working on (``appendfsync
    everysec``): the stream hands them out again; they are not started a second time here."""
    Shared.arrivals = []
    stuck = asyncio.Event()
    store = redis_stores()
    one, chat = await make_gateway(store, slow(stuck), adapter_class=Shared, workers=4)
    await chat.say("m1")
    await chat.say("m2")
    await eventually(lambda: one.pool.busy == 2)
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    jobs = f"{store.prefix}:jobs"
    for entry_id, _ in await client.xrange(jobs):
        await client.xack(jobs, "workers", entry_id)  # as if never read
    await client.xgroup_setid(jobs, "workers", "0")
    await client.aclose()
    await eventually(lambda: one.pool.reading.failures == 0 and not one.pool.reading.failing)
    await asyncio.sleep(1.5)  # the reader reads them again meanwhile
    stuck.set()

    await eventually(lambda: len(Shared.arrivals) >= 2, within=30)
    await asyncio.sleep(1.0)

    assert Shared.arrivals == ["re: m1", "re: m2"]
