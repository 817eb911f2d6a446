"""Every store method, with its reply lost once, behaves exactly as if called once.

Each scenario arms the proxy to lose the reply to the method's own command (Redis ran it; the
client's connection is cut before the answer arrives), calls the method once through the proxy,
and checks both what the call returned and what Redis now holds against one clean call. The store
re-sends what is safe to repeat and reads back what is not (new jobs). A store method without a
scenario here fails ``test_every_store_method_has_a_replay_scenario``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from clarigate.gateway.boundary.messages import MessageRef, Sender
from clarigate.gateway.store import Store
from clarigate.gateway.store.keys import GROUP

from ..conftest import REDIS_URL
from ..redis_proxy import ReplyDroppingProxy
from . import replay_state  # noqa: F401 (registers its scenarios)
from .replay import SCENARIOS, Replay, scenario
from .test_store_contract import answer, pending_record


@pytest.fixture
async def replay(redis_stores) -> AsyncIterator[Replay]:
    proxy = ReplyDroppingProxy()
    await proxy.start()
    store = redis_stores(url=proxy.url)
    raw = Redis.from_url(REDIS_URL, decode_responses=True)
    await store.ping()  # connected: the next command is the scenario's own
    yield Replay(store, raw, proxy)
    await raw.aclose()
    await proxy.close()


def test_every_store_method_has_a_replay_scenario() -> None:
    methods = {
        name
        for name, member in inspect.getmembers(Store, inspect.iscoroutinefunction)
        if not name.startswith("_") and name != "close"
    }
    assert methods - set(SCENARIOS) == set()


# --- threads ------------------------------------------------------------------------------------


@scenario("thread_for_chat")
async def _thread_for_chat(r: Replay) -> None:
    r.lose_reply_to(r.key("thread:k"))
    thread_id = await r.store.thread_for_chat("k", 60)
    assert await r.raw.get(r.key("thread:k")) == thread_id  # the id the first run stored
    assert await r.store.thread_for_chat("k", 60) == thread_id


@scenario("thread_with_pending")
async def _thread_with_pending(r: Replay) -> None:
    thread_id = await r.store.thread_for_chat("k", 60)
    await r.store.save_pending(pending_record(thread_id=thread_id))
    r.lose_reply_to(r.key("thread:k"))
    found, pending = await r.store.thread_with_pending("k", 60)
    assert (found, pending.request_id if pending else None) == (thread_id, "req-1")


@scenario("thread_lookup")
async def _thread_lookup(r: Replay) -> None:
    thread_id = await r.store.thread_for_chat("k", 60)
    await r.store.save_pending(pending_record(thread_id=thread_id))
    await r.store.claim_answer("req-1", Sender(user_id="U1"), answer())
    r.lose_reply_to(r.key("thread:k"))
    found = await r.store.thread_lookup("k", 60, ("locale:k", "en", 60))
    assert (found.thread_id, found.pending) == (thread_id, None)
    assert found.answered is not None and found.answered["request_id"] == "req-1"
    assert json.loads(await r.raw.get(r.key("state:locale:k"))) == "en"


@scenario("new_thread_for_chat")
async def _new_thread_for_chat(r: Replay) -> None:
    before = await r.store.thread_for_chat("k", 60)
    r.lose_reply_to(r.key("thread:k"))
    fresh = await r.store.new_thread_for_chat("k", 60)
    assert fresh != before and await r.raw.get(r.key("thread:k")) == fresh


@scenario("thread_of_chat")
async def _thread_of_chat(r: Replay) -> None:
    thread_id = await r.store.thread_for_chat("k", 60)
    r.lose_reply_to(r.key("thread:k"))
    assert await r.store.thread_of_chat("k") == thread_id


@scenario("chat_status")
async def _chat_status(r: Replay) -> None:
    thread_id = await r.store.thread_for_chat("k", 60)
    await r.store.save_pending(pending_record(thread_id=thread_id))
    await r.store.accept_job("e1", "message", "e1", "k", {}, 60)
    r.lose_reply_to("MGET")
    status = await r.store.chat_status("k")
    assert status.thread_id == thread_id and status.outstanding == 1
    assert status.pending is not None and status.pending.request_id == "req-1"


@scenario("has_thread")
async def _has_thread(r: Replay) -> None:
    await r.store.thread_for_chat("k", 60)
    r.lose_reply_to(r.key("thread:k"))
    assert await r.store.has_thread("k")


@scenario("has_thread_or_jobs")
async def _has_thread_or_jobs(r: Replay) -> None:
    await r.store.accept_job("e1", "message", "e1", "k", {}, 60)
    r.lose_reply_to(r.key("seq:k"))
    assert await r.store.has_thread_or_jobs("k")


# --- accept and dedupe --------------------------------------------------------------------------


@scenario("accept_job")
async def _accept_job(r: Replay) -> None:
    r.lose_reply_to(r.key("seen:e1"))
    assert await r.store.accept_job("e1", "message", "e1", "k", {"text": "hi"}, 60)  # not "duplicate"
    assert await r.raw.xlen(r.key("jobs")) == 1  # appended once
    assert await r.raw.get(r.key("seq:k")) == "1"
    assert not await r.store.accept_job("e1", "message", "e1", "k", {"text": "hi"}, 60)


@scenario("forget")
async def _forget(r: Replay) -> None:
    await r.store.first_time("e1", 60)
    r.lose_reply_to(r.key("seen:e1"))
    await r.store.forget("e1")
    assert await r.raw.exists(r.key("seen:e1")) == 0


@scenario("first_time")
async def _first_time(r: Replay) -> None:
    r.lose_reply_to(r.key("seen:click-1"))
    assert await r.store.first_time("click-1", 60)  # its own marker: still the first time
    assert not await r.store.first_time("click-1", 60)


# --- pending clarifications ---------------------------------------------------------------------


@scenario("save_pending")
async def _save_pending(r: Replay) -> None:
    record = pending_record(thread_id="th-1")
    r.lose_reply_to(r.key("ask:req-1"))
    await r.store.save_pending(record)
    assert await r.store.get_pending("req-1") == record
    assert await r.raw.get(r.key("tok:tok-req-1")) == "req-1"
    assert await r.raw.get(r.key("pending:th-1")) == "req-1"


@scenario("get_pending")
async def _get_pending(r: Replay) -> None:
    record = pending_record()
    await r.store.save_pending(record)
    r.lose_reply_to(r.key("ask:req-1"))
    assert await r.store.get_pending("req-1") == record


@scenario("pending_for_token")
async def _pending_for_token(r: Replay) -> None:
    await r.store.save_pending(pending_record())
    r.lose_reply_to(r.key("tok:tok-req-1"))
    found = await r.store.pending_for_token("tok-req-1")
    assert found is not None and found.request_id == "req-1"


@scenario("pending_for_thread")
async def _pending_for_thread(r: Replay) -> None:
    await r.store.save_pending(pending_record(thread_id="th-1"))
    r.lose_reply_to(r.key("pending:th-1"))
    found = await r.store.pending_for_thread("th-1")
    assert found is not None and found.request_id == "req-1"


@scenario("set_message_ref")
async def _set_message_ref(r: Replay) -> None:
    await r.store.save_pending(pending_record())
    ref = MessageRef(platform="slack", chat_id="C1", message_id="171.2")
    r.lose_reply_to(r.key("ask:req-1"))
    await r.store.set_message_ref("req-1", ref)
    stored = await r.store.get_pending("req-1")
    assert stored is not None and stored.message_ref == ref and stored.status == "pending"


@scenario("claim_answer")
async def _claim_answer(r: Replay) -> None:
    await r.store.save_pending(pending_record(thread_id="th-1"))
    r.lose_reply_to(r.key("ask:req-1"))
    claim = await r.store.claim_answer(
        "req-1",
        Sender(user_id="U1"),
        answer(),
        followup=("answer:req-1", "k", {"v": 1}),
        seen=("click-1", 60),
    )
    assert claim.status == "claimed"  # its own claim and marker: not "already answered", not "duplicate"
    assert claim.record is not None and claim.record.response == answer()
    assert await r.raw.xlen(r.key("jobs")) == 1  # one follow-up run
    assert await r.raw.exists(r.key("pending:th-1")) == 0
    noted = json.loads(await r.raw.get(r.key("state:answered:th-1")))  # noted once, by the claim
    assert noted["request_id"] == "req-1" and noted["at"] <= time.time()
    other = await r.store.claim_answer("req-1", Sender(user_id="U2"), answer(user="U2"))
    assert other.status == "already_answered"
    replayed = await r.store.claim_answer("req-1", Sender(user_id="U1"), answer(), seen=("click-1", 60))
    assert replayed.status == "duplicate"


# --- the work queue -----------------------------------------------------------------------------


async def _two_jobs(r: Replay, consumer: str = "me") -> None:
    """Two accepted jobs on one chat thread, the consumer group made."""
    await r.store.read_jobs(consumer, 10, 0)
    await r.store.accept_job("e1", "message", "e1", "k", {}, 60)
    await r.store.accept_job("e2", "message", "e2", "k", {}, 60)


@scenario("read_jobs")
async def _read_jobs(r: Replay) -> None:
    await _two_jobs(r)
    r.lose_reply_to("XREADGROUP")
    jobs = await r.store.read_jobs("me", 10, 0)
    assert [(j.inbound_id, j.deliveries) for j in jobs] == [("e1", 1), ("e2", 1)]  # none skipped
    assert await r.store.read_jobs("me", 10, 0) == []  # nor handed out twice
    assert sorted(await r.pending_of("me")) == sorted(j.entry_id for j in jobs)


@scenario("claim_stale_jobs")
async def _claim_stale_jobs(r: Replay) -> None:
    await _two_jobs(r, consumer="dead")
    await r.store.read_jobs("dead", 10, 0)
    await asyncio.sleep(0.05)
    r.lose_reply_to(r.store._autoclaim.sha)
    jobs = await r.store.claim_stale_jobs("me", 20, 10)
    assert [(j.inbound_id, j.deliveries) for j in jobs] == [("e1", 2), ("e2", 2)]
    assert await r.pending_of("dead") == []
    assert await r.store.read_jobs("me", 10, 0) == []  # not handed out a second time


@scenario("keep_jobs")
async def _keep_jobs(r: Replay) -> None:
    await _two_jobs(r)
    first, second = await r.store.read_jobs("me", 10, 0)
    await r.store.complete_job(second)
    r.lose_reply_to(r.store._keep.sha)
    statuses = await r.store.keep_jobs("me", [first.entry_id, second.entry_id])
    assert statuses == {first.entry_id: "held", second.entry_id: "gone"}
    assert await r.store.keep_jobs("me", [first.entry_id]) == {first.entry_id: "held"}  # still held by "me"
    assert await r.pending_of("me") == [first.entry_id]


@scenario("release_jobs")
async def _release_jobs(r: Replay) -> None:
    await _two_jobs(r)
    jobs = await r.store.read_jobs("me", 10, 0)
    r.lose_reply_to(r.store._release.sha)
    await r.store.release_jobs("me", [j.entry_id for j in jobs])
    taken = await r.store.claim_stale_jobs("next", 60_000, 10)  # released: idle for a day
    assert [j.inbound_id for j in taken] == ["e1", "e2"]


@scenario("decline_jobs")
async def _decline_jobs(r: Replay) -> None:
    await _two_jobs(r)
    jobs = await r.store.read_jobs("me", 10, 0)
    r.lose_reply_to(r.store._decline.sha)
    await r.store.decline_jobs("me", [j.entry_id for j in jobs])
    taken = await r.store.claim_stale_jobs("next", 60_000, 10)  # declined: idle for a day
    assert [(j.inbound_id, j.deliveries) for j in taken] == [("e1", 1), ("e2", 1)]  # counted once


@scenario("next_seq")
async def _next_seq(r: Replay) -> None:
    await _two_jobs(r)
    first, _ = await r.store.read_jobs("me", 10, 0)
    await r.store.complete_job(first)
    r.lose_reply_to(r.key("next:k"))
    assert await r.store.next_seq("k") == 2


@scenario("complete_job")
async def _complete_job(r: Replay) -> None:
    await _two_jobs(r)
    await r.store.accept_job("e3", "message", "e3", "k", {}, 60)
    first, second, _ = await r.store.read_jobs("me", 10, 0)
    r.lose_reply_to(r.key("done:e1"))
    await r.store.complete_job(first)
    assert await r.store.next_seq("k") == 2  # advanced once, not twice
    await r.store.complete_job(first)
    assert await r.store.next_seq("k") == 2
    assert sorted(await r.pending_of("me")) == sorted([second.entry_id, _.entry_id])


@scenario("requeue_job")
async def _requeue_job(r: Replay) -> None:
    await _two_jobs(r)
    first, second = await r.store.read_jobs("me", 10, 0)
    r.lose_reply_to(r.key("seq:k"))
    await r.store.requeue_job(first)  # re-sent: it finds its own move and appends nothing more
    (again,) = await r.store.read_jobs("me", 10, 0)
    assert (again.inbound_id, again.seq) == ("e1", 3)
    assert await r.store.next_seq("k") == 2 and not await r.store.is_done("e1")
    assert sorted(await r.pending_of("me")) == sorted([second.entry_id, again.entry_id])


@scenario("is_done")
async def _is_done(r: Replay) -> None:
    await _two_jobs(r)
    first, _ = await r.store.read_jobs("me", 10, 0)
    await r.store.complete_job(first)
    r.lose_reply_to(r.key("done:e1"))
    assert await r.store.is_done("e1")


@scenario("waiting_jobs")
async def _waiting_jobs(r: Replay) -> None:
    await _two_jobs(r)
    first, _ = await r.store.read_jobs("me", 10, 0)  # both held here
    await r.store.complete_job(first)  # done: no longer waiting
    await r.store.accept_job("e3", "message", "e3", "k", {}, 60)  # not delivered yet
    await r.store.accept_job("o1", "message", "o1", "other", {}, 60)  # another thread's
    r.lose_reply_to("XRANGE")
    waiting = await r.store.waiting_jobs("k", 100)
    assert [(job.inbound_id, job.seq, job.deliveries) for job in waiting] == [("e2", 2, 1), ("e3", 3, 1)]
    assert await r.store.next_seq("k") == 2


# --- delivery records and upkeep ---------------------------------------------------------------


@scenario("record_delivery")
async def _record_delivery(r: Replay) -> None:
    r.lose_reply_to(r.key("cleanup"))
    record = await r.store.record_delivery("e1", '{"items":1}', 60, cleanup=("th-1", 123.0))
    assert record.plan == '{"items":1}' and record.outcomes == {}  # its own plan, given back
    assert await r.raw.zscore(r.key("cleanup"), "th-1") == 123.0


@scenario("delivery_record")
async def _delivery_record(r: Replay) -> None:
    await r.store.record_delivery("e1", '{"items":1}', 60)
    await r.store.mark_delivered("e1", 0, "sent")
    r.lose_reply_to(r.key("cleanup"))
    record = await r.store.delivery_record("e1")
    assert record is not None and record.outcomes == {0: "sent"}


@scenario("mark_delivered")
async def _mark_delivered(r: Replay) -> None:
    await r.store.record_delivery("e1", '{"items":2}', 60)
    r.lose_reply_to("HSET")
    await r.store.mark_delivered("e1", 1, "sent")
    record = await r.store.delivery_record("e1")
    assert record is not None and record.outcomes == {1: "sent"}


@scenario("schedule_thread_cleanup")
async def _schedule_thread_cleanup(r: Replay) -> None:
    r.lose_reply_to("ZADD")
    await r.store.schedule_thread_cleanup("th-1", 50.0)
    assert await r.store.threads_due_for_cleanup(100.0, 10) == [("th-1", 50.0)]


@scenario("threads_due_for_cleanup")
async def _threads_due_for_cleanup(r: Replay) -> None:
    await r.store.schedule_thread_cleanup("th-1", 50.0)
    await r.store.schedule_thread_cleanup("th-2", 500.0)
    r.lose_reply_to(r.key("cleanup"))
    assert await r.store.threads_due_for_cleanup(100.0, 10) == [("th-1", 50.0)]


@scenario("thread_cleaned")
async def _thread_cleaned(r: Replay) -> None:
    await r.store.schedule_thread_cleanup("th-1", 50.0)
    r.lose_reply_to(r.key("cleanup"))
    await r.store.thread_cleaned("th-1", 50.0)
    assert await r.store.threads_due_for_cleanup(100.0, 10) == []


@scenario("trim_acknowledged")
async def _trim_acknowledged(r: Replay) -> None:
    await _two_jobs(r)
    (first,) = await r.store.read_jobs("me", 1, 0)
    await r.store.complete_job(first)
    r.lose_reply_to(r.store._trim.sha)
    await r.store.trim_acknowledged()  # a repeat trims nothing more: its count may read 0
    assert [j.inbound_id for j in await r.store.read_jobs("other", 10, 0)] == ["e2"]  # unread stays


@scenario("remove_idle_consumers")
async def _remove_idle_consumers(r: Replay) -> None:
    await _two_jobs(r, consumer="gone")
    (first,) = await r.store.read_jobs("gone", 1, 0)  # a consumer exists once it was handed a job
    await r.store.complete_job(first)
    await asyncio.sleep(0.3)
    (second,) = await r.store.read_jobs("me", 1, 0)  # heard from just now
    await r.store.complete_job(second)
    r.lose_reply_to(r.store._remove_idle.sha)
    await r.store.remove_idle_consumers(0.2, keep="me")  # a repeat finds it gone: may list none
    consumers = await r.raw.xinfo_consumers(r.key("jobs"), GROUP)
    assert [c["name"] for c in consumers] == ["me"]


# after every scenario above is registered
@pytest.mark.parametrize("method", sorted(SCENARIOS))
async def test_a_lost_reply_changes_nothing(method: str, replay: Replay) -> None:
    await SCENARIOS[method](replay)
    assert replay.proxy.dropped == 1, "the scenario's command never went through the proxy"
