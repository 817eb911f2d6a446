"""Replay scenarios of the store's adapter state, stop channel, votes and leases (registered
for ``test_store_replay``'s ``test_a_lost_reply_changes_nothing``)."""

from __future__ import annotations

import asyncio
import contextlib
import json

from .replay import Replay, scenario

# --- adapter state and leases -------------------------------------------------------------------


@scenario("set_json")
async def _set_json(r: Replay) -> None:
    r.lose_reply_to(r.key("state:wizard"))
    await r.store.set_json("wizard", {"step": 2}, 60)
    assert await r.store.get_json("wizard") == {"step": 2}


@scenario("get_json")
async def _get_json(r: Replay) -> None:
    await r.store.set_json("wizard", {"step": 2}, 60)
    r.lose_reply_to(r.key("state:wizard"))
    assert await r.store.get_json("wizard") == {"step": 2}


@scenario("get_jsons")
async def _get_jsons(r: Replay) -> None:
    await r.store.set_json("wizard", {"step": 2}, 60)
    r.lose_reply_to(r.key("state:wizard"))
    assert await r.store.get_jsons("gone", "wizard") == [None, {"step": 2}]


@scenario("publish_stop")
async def _publish_stop(r: Replay) -> None:
    async with r.raw.pubsub() as listener:  # another process, straight on Redis
        await listener.subscribe(r.key("stops"))
        r.lose_reply_to(r.key("stops"))
        stop = {"op": "stop", "thread": "t1"}
        assert await r.store.publish_stop(stop, keep=True) == 1  # re-sent: heard
        heard = None
        async with asyncio.timeout(5):
            while heard is None:  # (the subscription's own confirmation reads as None)
                heard = await listener.get_message(ignore_subscribe_messages=True, timeout=1)
    assert json.loads(heard["data"]) == stop
    # kept once (the re-sent pipeline records the same member), for a minute at most
    assert [json.loads(data) for data in await r.raw.zrange(r.key("stops-log"), 0, -1)] == [stop]
    assert 0 < await r.raw.pttl(r.key("stops-log")) <= 60_000


@scenario("listen_stops")
async def _listen_stops(r: Replay) -> None:
    heard: asyncio.Queue[dict] = asyncio.Queue()
    # kept before this process listened: not its to hear (no run of its own was stopped by it)
    await r.store.publish_stop({"op": "stop", "thread": "before"}, keep=True)
    r.lose_reply_to(r.key("stops"))  # the subscription's reply lost: subscribed again
    await r.store.listen_stops(heard.put_nowait)
    for _ in range(100):  # until the listener is subscribed again (it waits 1 s after a cut)
        await r.raw.publish(r.key("stops"), '{"op": "stop"}')
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2):
                assert await heard.get() == {"op": "stop"}
                return
    raise AssertionError("the stop channel was never heard again")


@scenario("delete")
async def _delete(r: Replay) -> None:
    await r.store.set_json("wizard", {"step": 2}, 60)
    r.lose_reply_to(r.key("state:wizard"))
    await r.store.delete("wizard")
    assert await r.store.get_json("wizard") is None


@scenario("cast_vote")
async def _cast_vote(r: Replay) -> None:
    await r.store.cast_vote("answer", "U1", "up", 60)
    r.lose_reply_to(r.key("votes:answer"))
    # the re-sent script finds its own change: it still reports the vote it replaced
    assert await r.store.cast_vote("answer", "U1", "down", 60) == "up"
    assert await r.store.votes_on("answer") == {"U1": "down"}


@scenario("votes_on")
async def _votes_on(r: Replay) -> None:
    await r.store.cast_vote("answer", "U1", "up", 60)
    r.lose_reply_to(r.key("votes:answer"))
    assert await r.store.votes_on("answer") == {"U1": "up"}


@scenario("acquire_lease")
async def _acquire_lease(r: Replay) -> None:
    r.lose_reply_to(r.key("lease:poll"))
    assert await r.store.acquire_lease("poll", "r1", 30)  # its own lease, renewed
    assert await r.raw.get(r.key("lease:poll")) == "r1"
    assert not await r.store.acquire_lease("poll", "r2", 30)


@scenario("lease_and_read")
async def _lease_and_read(r: Replay) -> None:
    await r.store.set_json("recalled:m1", 1, 60)
    r.lose_reply_to(r.key("lease:fate:m1"))
    assert await r.store.lease_and_read("fate:m1", "runs", 30, "gone", "recalled:m1") == (True, [None, 1])
    assert await r.raw.get(r.key("lease:fate:m1")) == "runs"  # its own lease, renewed
    assert await r.store.lease_and_read("fate:m1", "withdrawn", 30, "recalled:m1") == (False, [1])


@scenario("release_lease")
async def _release_lease(r: Replay) -> None:
    await r.store.acquire_lease("poll", "r1", 30)
    r.lose_reply_to(r.key("lease:poll"))
    await r.store.release_lease("poll", "r1")
    assert await r.store.acquire_lease("poll", "r2", 30)


@scenario("ping")
async def _ping(r: Replay) -> None:
    r.lose_reply_to("PING")
    assert await r.store.ping()
