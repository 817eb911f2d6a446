"""A recall is remembered as long as its message may wait for its run (``flow.recalls``)."""

from __future__ import annotations

from redis.asyncio import Redis

from clarigate.gateway.flow.outage import MAX_UNAVAILABLE_DELIVERIES
from tests.conftest import TEST_REDIS_URL


async def test_a_recall_outlasts_the_wait_for_an_agent_away(redis_stores, make_gateway):
    store = redis_stores()
    gateway, _ = await make_gateway(store, stale_claim_seconds=60, run_timeout_seconds=600)
    await gateway.withdraw("test", "m1")  # early in an outage: the message waits up to 2 hours

    client = Redis.from_url(TEST_REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{store.prefix}:*recalled:test:m1")]
        [ttl] = [await client.ttl(key) for key in keys]
    finally:
        await client.aclose()
    assert ttl > 60 * MAX_UNAVAILABLE_DELIVERIES + 600 - 5  # 2 h 10 min, not 1 h
