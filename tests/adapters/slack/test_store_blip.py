"""A short Redis blip (a restart, a failover) met by a Slack webhook is waited out within the ack:
200 and the job queued once, Slack never told 503. A longer outage, or a Redis that accepts
connections and answers nothing, is the outage answer (503 with ``Retry-After``) well within
Slack's 3 s, not after redis-py's 10 s reply timeout; the next request is accepted as usual.

The real gateway on a real Redis reached through a proxy that is cut (or hung) and brought back;
the events are signed as Slack signs them. Times are asserted generously.
"""

from __future__ import annotations

import asyncio
import time

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from tests.http_errors import http_unavailable

from ...conftest import RedisStoreFactory
from ...gateway.tcp_proxy import OutageProxy
from .conftest import MakeWorld, SlackWorld
from .slack_user import next_ts

ROUTE = "/slack/events"
#: Slack waits 3 s; the outage answer comes within the store budget (2.5 s), asserted loosely.
WITHIN = 5.0


def dm(text: str) -> dict[str, str]:
    return {
        "type": "message",
        "channel_type": "im",
        "channel": "D1",
        "user": "U1",
        "text": text,
        "ts": next_ts(),
    }


async def world_behind(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, proxy: OutageProxy
) -> SlackWorld:
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores(url=f"redis://127.0.0.1:{proxy.port}/0")
    world = await make_world(runner, store=store, streaming="off", progress_after_seconds=60.0)
    assert (await world.user.event(dm("warm up"))).status_code == 200  # connected before the blip
    await world.settle()
    return world


async def accepted_as_usual(world: SlackWorld, text: str) -> None:
    """The next message after the outage: 200, run once, answered once."""
    assert (await world.user.event(dm(text))).status_code == 200
    await world.settle()
    assert [c.text for c in world.runner.calls].count(text) == 1
    replies = [m.get("text") for m in world.fake.of("chat.postMessage") if m.get("channel") == "D1"]
    assert replies.count(f"You said: {text}") == 1


async def test_a_one_second_blip_is_waited_out_and_the_event_is_queued_once(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy
):
    world = await world_behind(make_world, redis_stores, redis_proxy)
    before = http_unavailable(ROUTE)
    await redis_proxy.cut()
    event = dm("through the blip")
    posting = asyncio.create_task(world.user.event(event, event_id="EvBLIP1"))
    await asyncio.sleep(1.0)
    assert not posting.done()  # still waiting for the store, not answered 503
    await redis_proxy.restore()
    answer = await posting
    assert answer.status_code == 200
    assert http_unavailable(ROUTE) == before  # Slack was not told 503
    # queued once: redis-py's re-sent accept recognized its own, and Slack's redelivery is a duplicate
    assert (await world.user.event(event, event_id="EvBLIP1", retry=1)).status_code == 200
    await world.settle()
    assert [c.text for c in world.runner.calls].count("through the blip") == 1
    replies = [m.get("text") for m in world.fake.of("chat.postMessage") if m.get("channel") == "D1"]
    assert replies.count("You said: through the blip") == 1
    await accepted_as_usual(world, "after the blip")


async def test_an_outage_longer_than_the_budget_is_503_within_slacks_wait(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy
):
    world = await world_behind(make_world, redis_stores, redis_proxy)
    before = http_unavailable(ROUTE)
    await redis_proxy.cut()
    started = time.monotonic()
    answer = await world.user.event(dm("during the outage"))
    took = time.monotonic() - started
    assert answer.status_code == 503 and int(answer.headers["retry-after"]) > 0
    # the store had its budget to come back (redis-py's re-sends), and the answer came in time
    assert 0.9 < took < WITHIN
    assert http_unavailable(ROUTE) == before + 1
    await redis_proxy.restore()
    await accepted_as_usual(world, "after the outage")


async def test_a_hung_redis_is_503_within_slacks_wait_not_after_the_reply_timeout(
    make_world: MakeWorld, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy
):
    world = await world_behind(make_world, redis_stores, redis_proxy)
    before = http_unavailable(ROUTE)
    await redis_proxy.hang()
    started = time.monotonic()
    answer = await world.user.event(dm("to a hung redis"))
    assert time.monotonic() - started < WITHIN
    assert answer.status_code == 503 and int(answer.headers["retry-after"]) > 0
    assert http_unavailable(ROUTE) == before + 1
    await redis_proxy.restore()
    await accepted_as_usual(world, "after the hang")
