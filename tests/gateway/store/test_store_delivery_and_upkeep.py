"""Store contract (both stores): delivery records, trimming, dead consumers, thread cleanup."""

from __future__ import annotations

import asyncio
import time

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.jobs.upkeep import Upkeep
from clarigate.gateway.store import Store
from clarigate.gateway.store.redis import RedisStore

from ..conftest import delete_prefix
from .test_store_contract import drain, pending_record


async def test_the_first_recorded_plan_stays_and_outcomes_are_noted(store: Store) -> None:
    assert await store.delivery_record("in-1") is None
    first = await store.record_delivery("in-1", '{"items":["a","b"]}', 60)
    again = await store.record_delivery("in-1", '{"items":["other"]}', 60)  # a second run, a retry
    await store.mark_delivered("in-1", 0, "sent")
    await store.mark_delivered("in-1", 0, "sent")  # repeated after a lost reply

    assert first.plan == again.plan == '{"items":["a","b"]}' and first.outcomes == {}
    record = await store.delivery_record("in-1")
    assert record is not None and record.plan == first.plan and record.outcomes == {0: "sent"}


async def test_state_saved_with_a_plan_is_saved_with_the_plan_recorded_only(store: Store) -> None:
    await store.record_delivery("in-1", '{"items":["a"]}', 60, state=("feedback:tok-a", {"n": 1}, 60))
    await store.record_delivery("in-1", '{"items":["b"]}', 60, state=("feedback:tok-b", {"n": 2}, 60))

    assert await store.get_json("feedback:tok-a") == {"n": 1}
    assert await store.get_json("feedback:tok-b") is None  # its plan lost: its token is never shown


async def test_state_saved_with_the_thread_lookup_only_when_no_question_is_open(store: Store) -> None:
    thread_id, _ = await store.thread_with_pending("chat-1", 60, ("locale:a", "zh", 60))
    assert await store.get_json("locale:a") == "zh"

    await store.save_pending(pending_record(thread_id=thread_id))
    _, pending = await store.thread_with_pending("chat-1", 60, ("locale:b", "en", 60))
    assert pending is not None and await store.get_json("locale:b") is None

    await store.save_pending(pending_record(thread_id=thread_id, ttl=-1))  # a question no longer open
    _, pending = await store.thread_with_pending("chat-1", 60, ("locale:c", "en", 60))
    assert pending is None and await store.get_json("locale:c") == "en"


async def test_trimming_never_drops_an_unread_or_pending_job(store: Store) -> None:
    for i in range(30):
        await store.accept_job(f"d{i}", "message", f"in-{i}", f"chat-{i}", {"n": i}, 60)
    read = await store.read_jobs("w1", count=10, block_ms=0)
    for job in read[:5]:
        await store.complete_job(job)

    await store.trim_acknowledged()

    rest = await drain(store, "w2")  # the 20 never read are all there
    assert sorted(job.inbound_id for job in rest) == sorted(f"in-{i}" for i in range(10, 30))
    held = await store.claim_stale_jobs("w3", 0, count=100)  # the 5 read, not completed, too
    assert {job.inbound_id for job in held} >= {f"in-{i}" for i in range(5, 10)}


async def test_trimming_removes_what_was_acknowledged(redis_url: str, store_prefix: str) -> None:
    store = RedisStore(redis_url, store_prefix)
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        for i in range(6):
            await store.accept_job(f"d{i}", "message", f"in-{i}", f"chat-{i}", {}, 60)
        jobs = await store.read_jobs("w1", count=3, block_ms=0)
        # acknowledged without being deleted (as a job completed before deletions were made)
        await client.xack(store.keys.jobs, "workers", *(job.entry_id for job in jobs[:2]))
        assert await client.xlen(store.keys.jobs) == 6

        assert await store.trim_acknowledged() == 2
        assert await client.xlen(store.keys.jobs) == 4  # 1 pending + 3 unread
    finally:
        await client.aclose()
        await store.close()


async def test_consumers_without_jobs_silent_long_enough_are_removed(store: Store) -> None:
    for i in range(3):
        await store.accept_job(f"d{i}", "message", f"in-{i}", f"chat-{i}", {}, 60)
    await store.read_jobs("holder", count=1, block_ms=0)  # holds a job: stays
    (done,) = await store.read_jobs("gone", count=1, block_ms=0)
    await store.complete_job(done)  # holds nothing now
    (mine,) = await store.read_jobs("me", count=1, block_ms=0)
    await store.complete_job(mine)
    await asyncio.sleep(0.05)

    removed = await store.remove_idle_consumers(0.01, keep="me")

    assert removed == ["gone"]
    assert await store.remove_idle_consumers(0.01, keep="me") == []


async def test_thread_cleanup_is_due_once_and_a_later_use_postpones_it(store: Store) -> None:
    now = time.time()
    await store.schedule_thread_cleanup("old", now - 1)
    await store.schedule_thread_cleanup("used", now - 1)
    await store.schedule_thread_cleanup("later", now + 3600)

    due = dict(await store.threads_due_for_cleanup(now, 10))
    assert set(due) == {"old", "used"}
    await store.schedule_thread_cleanup("used", now + 3600)  # used again meanwhile
    await store.thread_cleaned("old", due["old"])
    await store.thread_cleaned("used", due["used"])

    assert await store.threads_due_for_cleanup(now, 10) == []
    assert {t for t, _ in await store.threads_due_for_cleanup(now + 7200, 10)} == {"used", "later"}


async def test_threads_left_by_new_are_deleted_from_the_checkpointer_after_retention(
    store: Store, make_gateway
) -> None:
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, thread_retention_seconds=0)
    await chat.say("first thread")
    await gateway.drain()
    old_thread = runner.calls[0].thread_id
    await chat.say("/new")
    await chat.say("second thread")
    await gateway.drain()
    new_thread = runner.calls[-1].thread_id

    await Upkeep(gateway.config, store, runner, "me").run_once()

    assert new_thread != old_thread
    assert runner.deleted == [old_thread]


async def test_a_thread_in_use_is_not_deleted(store: Store, make_gateway) -> None:
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)  # retention: days
    await chat.say("hello")
    await gateway.drain()

    await Upkeep(gateway.config, store, runner, "me").run_once()

    assert runner.deleted == []


async def test_a_backlog_past_the_old_trim_size_keeps_every_job(redis_url: str, store_prefix: str) -> None:
    """Accepting used to trim the stream to ~100,000 entries, dropping unread jobs."""
    store = RedisStore(redis_url, store_prefix)
    total = 100_500
    try:
        for start in range(0, total, 1000):
            await asyncio.gather(
                *(
                    store.accept_job(f"d{i}", "message", f"in-{i}", f"chat-{i % 50}", "{}", 600)
                    for i in range(start, min(start + 1000, total))
                )
            )
        await store.trim_acknowledged()  # what upkeep does: nothing here was read yet
        seen: set[str] = set()
        while batch := await store.read_jobs("w1", count=5000, block_ms=0):
            seen.update(job.inbound_id for job in batch)
    finally:
        await store.close()
        await delete_prefix(redis_url, store_prefix)

    assert len(seen) == total
