"""What an operator sees in Redis: key names, lifetimes, readable records, round trips per step."""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from clarigate.gateway.boundary.messages import MessageRef, Sender
from clarigate.gateway.store.keys import ORDER_TTL_SECONDS
from clarigate.gateway.store.redis import RedisStore

from ..conftest import delete_prefix
from .test_store_contract import CHAT, answer, pending_record


@pytest.fixture
async def redis_store(redis_url: str, store_prefix: str) -> AsyncIterator[RedisStore]:
    """A Redis store under a unique prefix, its keys removed afterwards."""
    store = RedisStore(redis_url, store_prefix)
    yield store
    await store.close()
    await delete_prefix(redis_url, store_prefix)


@pytest.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client to look at what the store wrote."""
    client = Redis.from_url(redis_url, decode_responses=True)
    yield client
    await client.aclose()


async def test_keys_are_named_as_documented(redis_store: RedisStore, raw: Redis, store_prefix: str) -> None:
    p = store_prefix
    thread_id = await redis_store.thread_for_chat(CHAT.thread_key, 3600)
    await redis_store.accept_job("slack:Ev1", "message", "slack:Ev1", CHAT.thread_key, {"text": "hi"}, 60)
    await redis_store.accept_job("slack:Ev2", "message", "slack:Ev2", CHAT.thread_key, {"text": "and"}, 60)
    await redis_store.save_pending(pending_record(thread_id=thread_id))
    await redis_store.set_json("telegram:wizard:req-1:U1", {"step": 1}, 60)
    await redis_store.acquire_lease("telegram-poll", "r1", 60)
    job, _ = await redis_store.read_jobs("w1", 10, 0)
    await redis_store.complete_job(job)  # the second stays outstanding: the turnstile counters stay
    keys = {key async for key in raw.scan_iter(match=f"{p}:*")}
    assert keys == {
        f"{p}:thread:slack:T1:C1:171.1",
        f"{p}:seen:slack:Ev1",
        f"{p}:seen:slack:Ev2",
        f"{p}:seq:slack:T1:C1:171.1",
        f"{p}:next:slack:T1:C1:171.1",
        f"{p}:jobs",
        f"{p}:done:slack:Ev1",
        f"{p}:ask:req-1",
        f"{p}:tok:tok-req-1",
        f"{p}:pending:{thread_id}",
        f"{p}:state:telegram:wizard:req-1:U1",
        f"{p}:lease:telegram-poll",
        f"{p}:asks",
    }
    assert await raw.get(f"{p}:thread:slack:T1:C1:171.1") == thread_id
    assert await raw.zrange(f"{p}:asks", 0, -1) == ["req-1"]  # open clarifications, for the metrics
    assert await raw.get(f"{p}:tok:tok-req-1") == "req-1"
    assert await raw.xlen(f"{p}:jobs") == 1  # completed entries leave the stream


async def test_pending_keys_live_until_expires_at_also_once_answered(
    redis_store: RedisStore, raw: Redis, store_prefix: str
) -> None:
    record = pending_record(ttl=7 * 86400)
    await redis_store.save_pending(record)
    await redis_store.claim_answer("req-1", Sender(user_id="U2", display_name="Bo"), answer(user="U2"))
    expected_ms = (record.expires_at - time.time()) * 1000
    for key in (f"{store_prefix}:ask:req-1", f"{store_prefix}:tok:tok-req-1"):
        assert abs(await raw.pttl(key) - expected_ms) < 5000
    stored = await raw.hgetall(f"{store_prefix}:ask:req-1")  # a hash an operator reads field by field
    assert stored["status"] == "answered"
    assert stored["thread_id"] == record.thread_id
    assert json.loads(stored["answered_by"]) == {"user_id": "U2", "display_name": "Bo"}
    assert json.loads(stored["request"])["question"] == "Which region?"
    assert "claim_mark" in stored and "message_ref" not in stored  # no reference was set


async def test_turnstile_counters_expire_together_and_go_once_caught_up(
    redis_store: RedisStore, raw: Redis, store_prefix: str
) -> None:
    await redis_store.accept_job("e1", "message", "e1", "k", {}, 60)
    await redis_store.accept_job("e2", "message", "e2", "k", {}, 60)
    first, second = await redis_store.read_jobs("w1", 10, 0)
    await redis_store.complete_job(first)
    seq_ttl = await raw.pttl(f"{store_prefix}:seq:k")
    next_ttl = await raw.pttl(f"{store_prefix}:next:k")
    assert 0 <= ORDER_TTL_SECONDS * 1000 - seq_ttl < 5000  # a fresh key may show its whole TTL
    assert abs(seq_ttl - next_ttl) < 1000
    await redis_store.complete_job(second)
    assert await raw.exists(f"{store_prefix}:seq:k", f"{store_prefix}:next:k") == 0  # caught up


async def test_accept_claim_ref_and_complete_are_one_round_trip_each(redis_store: RedisStore) -> None:
    await redis_store.read_jobs("w1", 10, 0)  # creates the consumer group once
    await redis_store.save_pending(pending_record())
    before = redis_store.round_trips
    await redis_store.accept_job("e1", "message", "e1", "k", {}, 60)
    assert redis_store.round_trips == before + 1
    await redis_store.claim_answer("req-1", Sender(user_id="U1"), answer(), followup=("c1", "k", {}))
    assert redis_store.round_trips == before + 2
    await redis_store.set_message_ref("req-1", MessageRef(platform="slack", chat_id="C1", message_id="9"))
    assert redis_store.round_trips == before + 3
    jobs = await redis_store.read_jobs("w1", 10, 0)
    assert [j.kind for j in jobs] == ["message", "answer"]
    before = redis_store.round_trips
    await redis_store.complete_job(jobs[0])
    assert redis_store.round_trips == before + 1


async def test_a_second_replica_joins_the_existing_group(
    redis_store: RedisStore, redis_url: str, store_prefix: str
) -> None:
    await redis_store.accept_job("e1", "message", "e1", "k", {}, 60)
    await redis_store.accept_job("e2", "message", "e2", "k", {}, 60)
    other = RedisStore(redis_url, store_prefix)
    try:
        (mine,) = await redis_store.read_jobs("r1", 1, 0)
        (theirs,) = await other.read_jobs("r2", 1, 0)
    finally:
        await other.close()
    assert {mine.inbound_id, theirs.inbound_id} == {"e1", "e2"}


async def test_thread_with_pending_is_one_round_trip(redis_store: RedisStore) -> None:
    thread_id = await redis_store.thread_for_chat(CHAT.thread_key, 3600)
    await redis_store.save_pending(pending_record(thread_id=thread_id))
    before = redis_store.round_trips
    found, pending = await redis_store.thread_with_pending(CHAT.thread_key, 3600)
    assert redis_store.round_trips == before + 1
    assert (found, pending.request_id if pending else None) == (thread_id, "req-1")


async def test_work_queue_recovers_when_redis_lost_the_stream(
    redis_store: RedisStore, raw: Redis, store_prefix: str
) -> None:
    assert await redis_store.read_jobs("w1", 10, 0) == []  # the group exists now
    await raw.delete(f"{store_prefix}:jobs")  # a flush or a restart without persistence
    assert await redis_store.claim_stale_jobs("w1", 0, 10) == []
    await raw.delete(f"{store_prefix}:jobs")
    await redis_store.accept_job("e1", "message", "e1", "k", {}, 60)
    assert [j.inbound_id for j in await redis_store.read_jobs("w1", 10, 0)] == ["e1"]


async def test_scripts_are_loaded_again_after_redis_forgot_them(redis_store: RedisStore, raw: Redis) -> None:
    thread_id = await redis_store.thread_for_chat(CHAT.thread_key, 3600)
    await raw.script_flush()  # what a restarted Redis knows of the store's scripts: nothing
    assert await redis_store.thread_for_chat(CHAT.thread_key, 3600) == thread_id
    await redis_store.accept_job("slack:Ev9", "message", "slack:Ev9", CHAT.thread_key, {"text": "hi"}, 60)
    assert [job.inbound_id for job in await redis_store.read_jobs("w1", 10, 0)] == ["slack:Ev9"]


async def test_jobs_handed_back_and_answered_elsewhere_are_not_kept_for_good(
    redis_url: str, store_prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bounded memory: a worker process hands jobs back (the agent unavailable) and another
    process claims and completes them; the first one's record of what it was handed shrinks
    back once it passes ``HANDED_CHECK_AT`` (it grew by one id per such job, for good)."""
    from clarigate.gateway.store import redis_jobs

    monkeypatch.setattr(redis_jobs, "HANDED_CHECK_AT", 5)
    first, second = RedisStore(redis_url, store_prefix), RedisStore(redis_url, store_prefix)
    try:
        for i in range(8):
            await first.accept_job(f"in-{i}", "message", f"in-{i}", f"slack:T:D{i}", {"text": "x"}, 3600)
        assert len(await first.read_jobs("w1", 10, 0)) == 8  # handed to w1, then handed back
        taken = await second.claim_stale_jobs("w2", 0, 10)
        for job in taken:
            await second.complete_job(job)
        assert len(taken) == 8
        assert await first.claim_stale_jobs("w1", 0, 10) == []
        assert first._handed["w1"] == set()  # none of them is w1's any more
    finally:
        await first.close()
        await second.close()
        await delete_prefix(redis_url, store_prefix)
