"""A ``/cancel`` published on the stop channel while the run's process is subscribing again (its
Pub/Sub connection lost) reaches it once the subscription is back, but stops the run only if the
``/cancel`` was not answered meanwhile; with a Redis user that may not keep stops, one warning and
stops published as before."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from redis.asyncio import Redis

from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.flow.stops import RunStopped, stops_of
from clarigate.gateway.store.records import Job
from clarigate.gateway.store.redis import RedisStore
from tests.conftest import TEST_REDIS_URL
from tests.gateway.store.test_store_connection import documented_acl
from tests.gateway.tcp_proxy import OutageProxy


async def _subscribers(raw: Redis, channel: str) -> int:
    [(_, count)] = await raw.pubsub_numsub(channel)
    return int(count)


async def _until(check: Any) -> None:
    for _ in range(250):
        if await check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("not within 5 s")


async def test_a_stop_replayed_after_the_cancel_was_answered_lets_the_run_go_on(redis_stores):
    """Subscribed again only after the ``/cancel`` was answered (nothing to cancel, still working):
    the run goes on and answers, no "stopped" line after that reply."""
    async with _run_unheard(redis_stores, "c-late") as (here, raw, proxy, run, msg):
        said = await stops_of(here).cancel(msg, outstanding=1, locale="en", policy="starter")
        assert said is not None and "still working" in said.text
        await proxy.restore()
        channel = f"{here.prefix}:stops"
        await _until(lambda: _two(raw, channel))  # here, and there again: the stop replayed
        await asyncio.sleep(0.3)
        assert not run.done()
        run.cancel()


@contextlib.asynccontextmanager
async def _run_unheard(
    redis_stores: Any, chat: str
) -> AsyncIterator[tuple[Any, Redis, OutageProxy, Any, Any]]:
    """A run in a process whose connections to Redis are cut (its stop channel's subscription
    lost), and a ``/cancel`` of it for another process."""
    proxy = OutageProxy(6379)  # the run's process reaches Redis through it: its connections cut
    await proxy.start()
    raw = Redis.from_url(TEST_REDIS_URL, decode_responses=True)
    try:
        here = redis_stores()
        there = redis_stores(here.prefix, url=f"redis://127.0.0.1:{proxy.port}/0")
        channel = f"{here.prefix}:stops"
        ada = Sender(user_id="ada", display_name="Ada")
        conv = Conversation(platform="test", chat_id=chat, chat_type="private")
        job = Job(entry_id="1-0", kind="message", inbound_id=f"test:{chat}", order_key=conv.thread_key, seq=1)
        run = asyncio.ensure_future(
            stops_of(there).during(conv.thread_key, ada, job, lambda: asyncio.sleep(30))
        )
        await _until(lambda: _one(raw, channel))  # the run's process is subscribed
        await proxy.cut()  # the subscriber's connection lost, and no new one until restored
        await _until(lambda: _none(raw, channel))
        msg = InboundMessage(platform="test", event_id="e", conversation=conv, sender=ada, text="/cancel")
        yield here, raw, proxy, run, msg
    finally:
        await raw.aclose()
        await proxy.cut()


async def test_a_stop_published_as_the_subscribers_connection_is_killed_stops_the_run(redis_stores):
    name = f"sub-{uuid.uuid4().hex[:10]}"
    raw = Redis.from_url(TEST_REDIS_URL, decode_responses=True)
    try:
        here = redis_stores()
        there = redis_stores(here.prefix, url=f"{TEST_REDIS_URL}?client_name={name}")
        channel = f"{here.prefix}:stops"
        ada = Sender(user_id="ada", display_name="Ada")
        conv = Conversation(platform="test", chat_id="c-kill", chat_type="private")
        job = Job(entry_id="1-0", kind="message", inbound_id="test:kill", order_key=conv.thread_key, seq=1)
        slow = lambda: asyncio.sleep(30)  # noqa: E731
        run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ada, job, slow))
        await _until(lambda: _one(raw, channel))  # the run's process is subscribed
        [subscriber] = [c for c in await raw.client_list() if c["name"] == name and c["sub"] == "1"]

        # the subscriber killed, then the stop published, before redis-py can connect it again
        stop = {"op": "stop", "thread": conv.thread_key, "by": ada.model_dump(mode="json")}
        stop |= {"sent_at": time.time(), "policy": "starter", "reply": "r1"}
        real_send = here._send
        killing = lambda call: real_send(lambda client: call(_KillingFirst(client, subscriber["id"])))  # noqa: E731
        here._send = killing  # type: ignore[method-assign]
        assert await here.publish_stop(stop, keep=True) == 0  # nobody heard it
        with pytest.raises(RunStopped):  # heard once subscribed again
            await asyncio.wait_for(run, 10)
    finally:
        await raw.aclose()


class _KillingFirst:
    """A client whose pipelines start with ``CLIENT KILL ID client_id``: Redis runs the kill and
    the pipeline's commands in one go, before the killed client can connect again."""

    def __init__(self, client: Redis, client_id: str) -> None:
        self.client, self.client_id = client, client_id

    def pipeline(self, transaction: bool = True) -> Any:
        pipe = self.client.pipeline(transaction=transaction)
        pipe.execute_command("CLIENT", "KILL", "ID", self.client_id)
        return pipe


async def _one(raw: Redis, channel: str) -> bool:
    return await _subscribers(raw, channel) >= 1


async def _two(raw: Redis, channel: str) -> bool:
    return await _subscribers(raw, channel) == 2


async def _none(raw: Redis, channel: str) -> bool:
    return await _subscribers(raw, channel) == 0


async def test_a_redis_user_that_may_not_keep_stops_is_warned_once_and_still_publishes(caplog):
    raw = Redis.from_url(TEST_REDIS_URL, decode_responses=True)
    user, prefix = f"clarigate-test-{uuid.uuid4().hex[:10]}", f"acl-{uuid.uuid4().hex[:10]}"
    await raw.execute_command(*documented_acl(user, prefix, "pw"), "-zadd")  # an older, narrower ACL
    store = RedisStore(f"redis://{user}:pw@127.0.0.1:6379/0", prefix)
    try:
        async with raw.pubsub() as listener:
            await listener.subscribe(f"{prefix}:stops")
            with caplog.at_level(logging.WARNING, logger="clarigate.gateway.store.redis_stops"):
                assert await store.publish_stop({"op": "stop", "thread": "t1"}, keep=True) == 1
                assert await store.publish_stop({"op": "stop", "thread": "t2"}, keep=True) == 1
        warned = [r for r in caplog.records if "stops-log" in r.getMessage()]
        assert len(warned) == 1 and warned[0].levelno == logging.WARNING
        assert await raw.exists(f"{prefix}:stops-log") == 0
    finally:
        await store.close()
        await raw.execute_command("ACL", "DELUSER", user)
        await raw.aclose()
