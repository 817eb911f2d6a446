"""The store contract, run against both the Redis store (real Redis) and the embedded store."""

from __future__ import annotations

import asyncio
import time

from clarigate.agent.protocol import AnsweredBy, HumanInputRequest, HumanInputResponse, answer_declined
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.store import PendingRecord, Store
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore

CHAT = Conversation(platform="slack", workspace="T1", chat_id="C1", topic="171.1")


def pending_record(request_id: str = "req-1", *, thread_id: str = "th-1", ttl: float = 60) -> PendingRecord:
    """A clarification waiting for its answer."""
    now = time.time()
    return PendingRecord(
        request=HumanInputRequest(request_id=request_id, tool_call_id="call-1", question="Which region?"),
        token=f"tok-{request_id}",
        thread_id=thread_id,
        conversation=CHAT,
        asked_by=Sender(user_id="U1", display_name="Ada"),
        created_at=now,
        expires_at=now + ttl,
    )


def answer(request_id: str = "req-1", user: str = "U1") -> HumanInputResponse:
    """A typed answer from ``user``."""
    return HumanInputResponse(
        request_id=request_id,
        response_kind="text",
        value="eu-west",
        answered_by=AnsweredBy(platform="slack", user_id=user),
    )


async def drain(store: Store, consumer: str = "w1") -> list:
    """Every job currently readable."""
    return await store.read_jobs(consumer, count=100, block_ms=0)


# --- thread mapping ---------------------------------------------------------------------------


async def test_thread_for_chat_is_made_once_and_reused(store: Store) -> None:
    first = await store.thread_for_chat(CHAT.thread_key, 3600)
    assert await store.thread_for_chat(CHAT.thread_key, 3600) == first
    assert await store.has_thread(CHAT.thread_key)
    assert not await store.has_thread("slack:T1:C1:other")
    assert await store.thread_for_chat("slack:T1:C1:other", 3600) != first


async def test_replicas_racing_get_the_same_thread(store: Store, redis_url: str, store_prefix: str) -> None:
    stores = [store] + ([RedisStore(redis_url, store_prefix)] if isinstance(store, RedisStore) else [])
    try:
        ids = await asyncio.gather(*(stores[i % len(stores)].thread_for_chat("k", 60) for i in range(20)))
    finally:
        for other in stores[1:]:
            await other.close()
    assert len(set(ids)) == 1


async def test_mapping_survives_a_new_store_on_the_same_redis(redis_url: str, store_prefix: str) -> None:
    before = RedisStore(redis_url, store_prefix)
    thread_id = await before.thread_for_chat(CHAT.thread_key, 3600)
    await before.close()
    after = RedisStore(redis_url, store_prefix)
    try:
        assert await after.thread_for_chat(CHAT.thread_key, 3600) == thread_id
    finally:
        await after.close()
        from ..conftest import delete_prefix

        await delete_prefix(redis_url, store_prefix)


async def test_new_thread_replaces_the_mapping(store: Store) -> None:
    old = await store.thread_for_chat(CHAT.thread_key, 3600)
    fresh = await store.new_thread_for_chat(CHAT.thread_key, 3600)
    assert fresh != old
    assert await store.thread_for_chat(CHAT.thread_key, 3600) == fresh


# --- accept and dedupe --------------------------------------------------------------------------


async def test_same_delivery_is_accepted_once(store: Store) -> None:
    assert await store.accept_job("slack:Ev1", "message", "slack:Ev1", "k", {"text": "hi"}, 60)
    assert not await store.accept_job("slack:Ev1", "message", "slack:Ev1", "k", {"text": "hi"}, 60)
    jobs = await drain(store)
    assert [(j.kind, j.inbound_id, j.order_key, j.seq, j.payload) for j in jobs] == [
        ("message", "slack:Ev1", "k", 1, {"text": "hi"})
    ]


async def test_concurrent_deliveries_to_two_instances_append_one_job(
    store: Store, redis_url: str, store_prefix: str
) -> None:
    stores = [store] + ([RedisStore(redis_url, store_prefix)] if isinstance(store, RedisStore) else [])
    try:
        results = await asyncio.gather(
            *(stores[i % len(stores)].accept_job("tg:42", "message", "tg:42", "k", {}, 60) for i in range(20))
        )
    finally:
        for other in stores[1:]:
            await other.close()
    assert results.count(True) == 1
    assert len(await drain(store)) == 1


async def test_forget_lets_a_redelivery_through(store: Store) -> None:
    assert await store.accept_job("slack:Ev2", "message", "slack:Ev2", "k", {}, 60)
    await store.forget("slack:Ev2")
    assert await store.accept_job("slack:Ev2", "message", "slack:Ev2", "k", {}, 60)
    assert [j.seq for j in await drain(store)] == [1, 2]


async def test_first_time_is_true_once(store: Store) -> None:
    assert await store.first_time("refused:U9", 60)
    assert not await store.first_time("refused:U9", 60)


async def test_a_claim_after_new_changes_nothing(store: Store) -> None:
    old = await store.thread_for_chat("k", 60)
    await store.save_pending(pending_record(thread_id=old))
    await store.new_thread_for_chat("k", 60)  # /new: the question belongs to the old thread
    claim = await store.claim_answer("req-1", Sender(user_id="U1"), answer(), ("c1", "k", {}), current_in="k")
    assert claim.status == "restarted" and claim.record is not None and claim.record.status == "pending"
    assert await drain(store) == []  # nothing to run
    again = await store.claim_answer("req-1", Sender(user_id="U1"), answer(), ("c1", "k", {}))
    assert again.status == "claimed"  # unchecked, it would have run on the old thread


async def test_a_claim_with_a_dedupe_marker_runs_once_per_interaction(store: Store) -> None:
    await store.save_pending(pending_record())
    who = Sender(user_id="U1")
    first = await store.claim_answer("req-1", who, answer(), ("c1", "k", {}), seen=("click:1", 60))
    replayed = await store.claim_answer("req-1", who, answer(), ("c1", "k", {}), seen=("click:1", 60))
    another = await store.claim_answer("req-1", who, answer(), ("c1", "k", {}), seen=("click:2", 60))
    assert (first.status, replayed.status, another.status) == ("claimed", "duplicate", "already_answered")
    assert replayed.record is not None and replayed.record.status == "answered"
    assert len(await drain(store)) == 1  # one follow-up run
    assert not await store.first_time("click:1", 60)  # the marker is the one first_time reads


# --- pending clarifications ---------------------------------------------------------------------


async def test_pending_record_is_found_by_id_token_and_thread(store: Store) -> None:
    record = pending_record()
    await store.save_pending(record)
    assert await store.get_pending("req-1") == record
    assert await store.pending_for_token("tok-req-1") == record
    assert await store.pending_for_thread("th-1") == record
    assert await store.pending_for_token("nope") is None
    assert await store.pending_for_thread("th-other") is None


async def test_message_ref_is_remembered(store: Store) -> None:
    await store.save_pending(pending_record())
    ref = MessageRef(platform="slack", chat_id="C1", message_id="171.2", extra={"thread_ts": "171.1"})
    await store.set_message_ref("req-1", ref)
    assert (await store.get_pending("req-1")).message_ref == ref


async def test_twenty_concurrent_claims_give_one_answer_and_one_job(store: Store) -> None:
    await store.save_pending(pending_record())
    results = await asyncio.gather(
        *(
            store.claim_answer(
                "req-1",
                Sender(user_id=f"U{i}", display_name=f"User {i}"),
                answer(user=f"U{i}"),
                followup=(f"slack:click{i}", "k", {"n": i}),
            )
            for i in range(20)
        )
    )
    winners = [r for r in results if r.status == "claimed"]
    assert len(winners) == 1
    winner = winners[0].record.answered_by
    losers = [r for r in results if r.status != "claimed"]
    assert {r.status for r in losers} == {"already_answered"}
    assert all(r.record.answered_by == winner for r in losers)
    stored = await store.get_pending("req-1")
    assert stored.status == "answered" and stored.answered_by == winner
    assert stored.response.answered_by.user_id == winner.user_id
    jobs = await drain(store)
    assert len(jobs) == 1
    assert (jobs[0].kind, jobs[0].inbound_id) == ("answer", f"slack:click{jobs[0].payload['n']}")
    assert f"U{jobs[0].payload['n']}" == winner.user_id
    # the thread has no open clarification any more, but the token still finds the answered record
    assert await store.pending_for_thread("th-1") is None
    assert (await store.pending_for_token("tok-req-1")).status == "answered"


async def test_claim_of_unknown_request_is_missing(store: Store) -> None:
    result = await store.claim_answer("ghost", Sender(user_id="U1"), answer("ghost"))
    assert result.status == "missing" and result.record is None


async def test_message_ref_after_claim_keeps_the_answer(store: Store) -> None:
    await store.save_pending(pending_record())
    await store.claim_answer("req-1", Sender(user_id="U1"), answer())
    await store.set_message_ref("req-1", MessageRef(platform="slack", chat_id="C1", message_id="9"))
    stored = await store.get_pending("req-1")
    assert stored.status == "answered" and stored.message_ref.message_id == "9"


async def test_new_pending_in_thread_is_not_unlinked_by_an_old_claim(store: Store) -> None:
    await store.save_pending(pending_record("req-1"))
    await store.save_pending(pending_record("req-2"))
    await store.claim_answer("req-1", Sender(user_id="U1"), answer("req-1"))
    assert (await store.pending_for_thread("th-1")).request_id == "req-2"


async def test_follow_up_takes_the_next_seq_of_its_order_key(store: Store) -> None:
    await store.accept_job("e1", "message", "e1", "k", {}, 60)
    await store.save_pending(pending_record())
    await store.claim_answer("req-1", Sender(user_id="U1"), answer(), followup=("c1", "k", {}))
    assert [(j.kind, j.seq) for j in await drain(store)] == [("message", 1), ("answer", 2)]


# --- work queue ---------------------------------------------------------------------------------


async def test_jobs_are_read_once_completed_and_marked_done(store: Store) -> None:
    for i in range(3):
        await store.accept_job(f"e{i}", "message", f"in{i}", "k", {"i": i}, 60)
    first = await store.read_jobs("w1", count=2, block_ms=0)
    rest = await store.read_jobs("w2", count=10, block_ms=0)
    assert [j.payload["i"] for j in first + rest] == [0, 1, 2]
    assert await store.read_jobs("w3", count=10, block_ms=0) == []
    assert not await store.is_done("in0")
    await store.complete_job(first[0])
    assert await store.is_done("in0")


async def test_read_jobs_wakes_when_a_job_arrives(store: Store) -> None:
    reader = asyncio.create_task(store.read_jobs("w1", count=10, block_ms=2000))
    await asyncio.sleep(0.05)
    await store.accept_job("late", "message", "late", "k", {}, 60)
    jobs = await asyncio.wait_for(reader, 3)
    assert [j.inbound_id for j in jobs] == ["late"]


async def test_read_jobs_returns_empty_after_block(store: Store) -> None:
    assert await store.read_jobs("w1", count=10, block_ms=50) == []


async def test_turnstile_runs_one_order_key_in_arrival_order(store: Store) -> None:
    for i in range(3):
        await store.accept_job(f"a{i}", "message", f"a{i}", "chat-a", {}, 60)
    await store.accept_job("b0", "message", "b0", "chat-b", {}, 60)
    jobs = {j.inbound_id: j for j in await drain(store)}
    assert [jobs[f"a{i}"].seq for i in range(3)] == [1, 2, 3]
    assert jobs["b0"].seq == 1
    assert await store.next_seq("chat-a") == 1 and await store.next_seq("chat-b") == 1
    await store.complete_job(jobs["a0"])
    assert await store.next_seq("chat-a") == 2
    await store.complete_job(jobs["a0"])  # a second completion must not skip a1
    assert await store.next_seq("chat-a") == 2
    await store.complete_job(jobs["a1"])
    await store.complete_job(jobs["a2"])
    await store.complete_job(jobs["b0"])
    # caught up: the chat's next message starts again at seq 1, which may run at once
    await store.accept_job("a3", "message", "a3", "chat-a", {}, 60)
    (a3,) = await drain(store)
    assert a3.seq == await store.next_seq("chat-a") == 1


async def test_entries_of_a_dead_consumer_are_claimed_after_min_idle(store: Store) -> None:
    await store.accept_job("e1", "message", "in1", "k", {"text": "hi"}, 60)
    (held,) = await store.read_jobs("dead", count=10, block_ms=0)
    assert await store.claim_stale_jobs("alive", min_idle_ms=10_000, count=10) == []
    await asyncio.sleep(0.12)
    (taken,) = await store.claim_stale_jobs("alive", min_idle_ms=100, count=10)
    assert (taken.entry_id, taken.payload, taken.deliveries) == (held.entry_id, {"text": "hi"}, 2)
    await store.complete_job(taken)
    await store.complete_job(held)  # the dead consumer waking up late changes nothing
    assert await store.is_done("in1")
    assert await store.next_seq("k") == 1
    assert await store.claim_stale_jobs("alive", min_idle_ms=0, count=10) == []


async def test_touched_entries_are_not_claimed(store: Store) -> None:
    await store.accept_job("e1", "message", "in1", "k", {}, 60)
    (held,) = await store.read_jobs("busy", count=10, block_ms=0)
    await asyncio.sleep(0.12)
    assert await store.keep_jobs("busy", [held.entry_id]) == {held.entry_id: "held"}
    assert await store.claim_stale_jobs("thief", min_idle_ms=100, count=10) == []


async def test_keeping_never_takes_an_entry_back_from_its_new_holder(store: Store) -> None:
    await store.accept_job("e1", "message", "in1", "k", {}, 60)
    await store.accept_job("e2", "message", "in2", "k2", {}, 60)
    first, second = await store.read_jobs("stalled", count=10, block_ms=0)
    await asyncio.sleep(0.12)
    (taken,) = await store.claim_stale_jobs("taker", min_idle_ms=100, count=1)
    assert taken.entry_id == first.entry_id

    await store.keep_jobs("stalled", [first.entry_id])  # the stalled consumer wakes up
    statuses = await store.keep_jobs("stalled", [first.entry_id, second.entry_id])
    assert statuses == {first.entry_id: "taken", second.entry_id: "held"}
    await store.complete_job(taken)
    assert await store.keep_jobs("stalled", [first.entry_id]) == {first.entry_id: "gone"}


async def test_released_entries_are_claimed_at_once_and_only_the_releasers(store: Store) -> None:
    await store.accept_job("e1", "message", "in1", "k", {}, 60)
    await store.accept_job("e2", "message", "in2", "k2", {}, 60)
    (mine,) = await store.read_jobs("stopping", count=1, block_ms=0)
    (theirs,) = await store.read_jobs("busy", count=1, block_ms=0)

    await store.release_jobs("stopping", [mine.entry_id, theirs.entry_id])

    claimed = await store.claim_stale_jobs("taker", min_idle_ms=600_000, count=10)
    assert [job.entry_id for job in claimed] == [mine.entry_id]  # "busy" still holds its own


# --- expiry, adapter state, leases, health ------------------------------------------------------


async def test_pending_expires_and_then_cannot_be_claimed(store: Store) -> None:
    await store.save_pending(pending_record(ttl=0.15))
    assert await store.get_pending("req-1") is not None
    await asyncio.sleep(0.2)
    assert await store.get_pending("req-1") is None
    assert await store.pending_for_token("tok-req-1") is None
    assert await store.pending_for_thread("th-1") is None
    assert (await store.claim_answer("req-1", Sender(user_id="U1"), answer())).status == "missing"


async def test_adapter_state_round_trips_and_expires(store: Store) -> None:
    value = {"step": 2, "values": {"region": "eu"}, "names": ["a", "b"]}
    await store.set_json("telegram:wizard:r1:U1", value, 60)
    assert await store.get_json("telegram:wizard:r1:U1") == value
    await store.delete("telegram:wizard:r1:U1")
    assert await store.get_json("telegram:wizard:r1:U1") is None
    await store.set_json("short", [1], 0.1)
    await asyncio.sleep(0.15)
    assert await store.get_json("short") is None


async def test_lease_is_held_renewed_refused_released_and_expires(store: Store) -> None:
    assert await store.acquire_lease("telegram-poll", "r1", 60)
    assert await store.acquire_lease("telegram-poll", "r1", 60)  # renewal by the holder
    assert not await store.acquire_lease("telegram-poll", "r2", 60)
    await store.release_lease("telegram-poll", "r2")  # not the holder: nothing happens
    assert not await store.acquire_lease("telegram-poll", "r2", 60)
    await store.release_lease("telegram-poll", "r1")
    assert await store.acquire_lease("telegram-poll", "r2", 0.1)
    await asyncio.sleep(0.15)
    assert await store.acquire_lease("telegram-poll", "r1", 60)


async def test_ping(store: Store) -> None:
    assert await store.ping()


async def test_ping_is_false_when_redis_is_down(unused_tcp_port: int) -> None:
    down = RedisStore(f"redis://127.0.0.1:{unused_tcp_port}/0", "x")
    try:
        assert await down.ping() is False
    finally:
        await down.close()


async def test_memory_store_expires_by_its_clock() -> None:
    now = [1000.0]
    memory = MemoryStore("m", clock=lambda: now[0])
    record = pending_record().model_copy(update={"created_at": 1000.0, "expires_at": 1000.0 + 7 * 86400})
    await memory.save_pending(record)
    now[0] += 7 * 86400 - 1
    assert await memory.pending_for_token("tok-req-1") is not None
    now[0] += 2
    assert await memory.pending_for_token("tok-req-1") is None
    assert (await memory.claim_answer("req-1", Sender(user_id="U1"), answer())).status == "missing"


async def test_thread_with_pending_maps_and_finds_the_open_clarification(store: Store) -> None:
    thread_id, pending = await store.thread_with_pending(CHAT.thread_key, 3600)
    assert pending is None
    assert thread_id == await store.thread_for_chat(CHAT.thread_key, 3600)
    await store.save_pending(pending_record(thread_id=thread_id))
    again, pending = await store.thread_with_pending(CHAT.thread_key, 3600)
    assert again == thread_id and pending is not None and pending.request_id == "req-1"
    await store.claim_answer("req-1", Sender(user_id="U1"), answer())
    assert await store.thread_with_pending(CHAT.thread_key, 3600) == (thread_id, None)


async def test_the_lookup_reads_the_last_answer_its_claim_noted(store: Store) -> None:
    found = await store.thread_lookup(CHAT.thread_key, 3600)
    assert (found.pending, found.answered) == (None, None)
    await store.save_pending(pending_record(thread_id=found.thread_id))
    before = time.time()
    await store.claim_answer("req-1", Sender(user_id="U2"), answer(user="U2"))
    after = await store.thread_lookup(CHAT.thread_key, 3600)
    assert after.thread_id == found.thread_id and after.pending is None and after.answered is not None
    assert after.answered["request_id"] == "req-1"
    assert before - 0.01 <= after.answered["at"] <= time.time() + 0.01
    await store.save_pending(pending_record("req-2", thread_id=found.thread_id))
    asked = await store.thread_lookup(CHAT.thread_key, 3600)
    assert asked.pending is not None and asked.answered is None  # a question open: no note read
    declined = answer_declined(asked.pending.request, None, "superseded")
    assert (await store.claim_answer("req-2", Sender(user_id="U1"), declined)).status == "claimed"
    last = await store.thread_lookup(CHAT.thread_key, 3600)
    assert last.answered is not None and last.answered["request_id"] == "req-1"  # a decline notes nothing


async def test_message_ref_with_awkward_text_survives_claim_and_update(store: Store) -> None:
    await store.save_pending(pending_record())
    awkward = {"thread_ts": '}{"status":"pending"\\', "topic": "[{]}", "note": '引号"}'}
    first = MessageRef(platform="slack", chat_id="C1", message_id="1", extra=awkward)
    await store.set_message_ref("req-1", first)
    claim = await store.claim_answer("req-1", Sender(user_id="U1"), answer())
    assert claim.status == "claimed" and claim.record.message_ref == first
    second = MessageRef(platform="slack", chat_id="C1", message_id="2")
    await store.set_message_ref("req-1", second)
    stored = await store.get_pending("req-1")
    assert (stored.status, stored.message_ref, stored.answered_by.user_id) == ("answered", second, "U1")
    again = await store.claim_answer("req-1", Sender(user_id="U2"), answer(user="U2"))
    assert again.status == "already_answered" and again.record.answered_by.user_id == "U1"


async def test_memory_store_forgets_expired_keys_nobody_reads() -> None:
    now = [1000.0]
    memory = MemoryStore("m", clock=lambda: now[0])
    for i in range(3000):
        await memory.first_time(f"slack:Ev{i}", 60)
    now[0] += 61
    for i in range(1100):
        await memory.first_time(f"slack:new{i}", 60)
    assert len(memory._values) < 3000  # the old dedupe markers were swept, not kept forever
    assert not await memory.first_time("slack:new1", 60)


# --- votes on answers -------------------------------------------------------------------------


async def test_a_vote_is_one_per_person_and_a_new_one_replaces_it(store: Store) -> None:
    assert await store.cast_vote("answer-1", "U1", "up", 60) is None  # the first vote
    assert await store.cast_vote("answer-1", "U1", "up", 60) == "up"  # the same again: no change
    assert await store.cast_vote("answer-1", "U1", "down", 60) == "up"  # changed
    assert await store.cast_vote("answer-1", "U2", "up", 60) is None  # another person's own
    assert await store.votes_on("answer-1") == {"U1": "down", "U2": "up"}
    assert await store.votes_on("answer-2") == {}


async def test_votes_expire_with_their_answer(store: Store) -> None:
    await store.cast_vote("answer-1", "U1", "up", 1)
    await asyncio.sleep(1.3)
    assert await store.votes_on("answer-1") == {}
    assert await store.cast_vote("answer-1", "U1", "down", 60) is None
