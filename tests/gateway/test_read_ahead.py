"""The store's ``complete_and_read``: completing a job and reading the next ones in one call."""

from __future__ import annotations

from gateway.store import Store
from tests.gateway.test_store_contract import pending_record


async def test_completing_reads_the_next_jobs_with_the_lookups_of_those_whose_turn_came(store: Store):
    await store.accept_job("a1", "message", "a1", "chat-a", {"n": 1}, 60)
    (a1,) = await store.read_jobs("w1", count=10, block_ms=0)
    await store.accept_job("a2", "message", "a2", "chat-a", {"n": 2}, 60)
    await store.accept_job("b1", "message", "b1", "chat-b", {"n": 3}, 60)
    await store.accept_job("b2", "message", "b2", "chat-b", {"n": 4}, 60)
    thread_a = await store.thread_for_chat("chat-a", 3600)
    await store.save_pending(pending_record(thread_id=thread_a))

    a2, b1, b2 = await store.complete_and_read(a1, "w1", 3, 3600)

    assert await store.is_done("a1") and await store.next_seq("chat-a") == 2
    assert [j.inbound_id for j in (a2, b1, b2)] == ["a2", "b1", "b2"]
    assert [j.payload["n"] for j in (a2, b1, b2)] == [2, 3, 4]
    assert a2.turn_ready and a2.thread_lookup is not None
    assert a2.thread_lookup[0] == thread_a and a2.thread_lookup[1] is not None
    assert a2.thread_lookup[1].request_id == "req-1"
    # b1 runs first: its chat thread is mapped in the same step, nothing is open there
    assert b1.turn_ready and b1.thread_lookup == (await store.thread_for_chat("chat-b", 3600), None)
    assert not b2.turn_ready and b2.thread_lookup is None  # b1 is outstanding: b2 waits its turn
    assert await store.read_jobs("w2", count=10, block_ms=0) == []  # delivered once, to w1


async def test_completing_with_nothing_to_read_just_completes(store: Store):
    await store.accept_job("a1", "message", "a1", "chat-a", {}, 60)
    (a1,) = await store.read_jobs("w1", count=10, block_ms=0)
    assert await store.complete_and_read(a1, "w1", 2, 3600) == []
    assert await store.is_done("a1")
    await store.accept_job("a2", "message", "a2", "chat-a", {}, 60)
    (a2,) = await store.read_jobs("w1", count=10, block_ms=0)
    assert a2.seq == 1  # caught up: the turnstile was reset as by complete_job
