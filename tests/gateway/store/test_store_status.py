"""What ``/status`` reads from the store, held to the same contract by both stores."""

from __future__ import annotations

import time

from clarigate.gateway.store import Store
from clarigate.gateway.store.keys import new_thread_id, thread_started_at

from .test_store_contract import CHAT, answer, drain, pending_record


async def test_thread_of_chat_reads_without_making_a_thread(store: Store) -> None:
    assert await store.thread_of_chat(CHAT.thread_key) is None
    assert not await store.has_thread(CHAT.thread_key)
    made = await store.thread_for_chat(CHAT.thread_key, 3600)
    assert await store.thread_of_chat(CHAT.thread_key) == made


async def test_chat_status_sees_the_thread_its_open_question_and_the_outstanding_jobs(store: Store) -> None:
    empty = await store.chat_status(CHAT.thread_key)
    assert (empty.thread_id, empty.pending, empty.outstanding) == (None, None, 0)
    assert not await store.has_thread(CHAT.thread_key)  # reading the status made nothing

    thread_id = await store.thread_for_chat(CHAT.thread_key, 3600)
    await store.save_pending(pending_record(thread_id=thread_id))
    for n in range(3):
        await store.accept_job(f"e{n}", "message", f"e{n}", CHAT.thread_key, {"n": n}, 60)
    status = await store.chat_status(CHAT.thread_key)
    assert status.thread_id == thread_id and status.outstanding == 3
    assert status.pending is not None and status.pending.request_id == "req-1"

    jobs = await drain(store)
    await store.complete_job(jobs[0])
    await store.claim_answer("req-1", pending_record().asked_by, answer())  # type: ignore[arg-type]
    status = await store.chat_status(CHAT.thread_key)
    assert status.outstanding == 2 and status.pending is None
    for job in jobs[1:]:
        await store.complete_job(job)
    assert (await store.chat_status(CHAT.thread_key)).outstanding == 0


async def test_a_chat_thread_is_known_from_its_first_accepted_job_until_done_or_by_its_agent_thread(
    store: Store,
) -> None:
    assert not await store.has_thread_or_jobs(CHAT.thread_key)
    await store.accept_job("e1", "message", "e1", CHAT.thread_key, {}, 60)
    assert await store.has_thread_or_jobs(CHAT.thread_key)  # waiting: no agent thread yet
    assert not await store.has_thread(CHAT.thread_key)
    [job] = await drain(store)
    await store.complete_job(job)  # done without making an agent thread (dropped, say)
    assert not await store.has_thread_or_jobs(CHAT.thread_key)
    await store.thread_for_chat(CHAT.thread_key, 3600)
    assert await store.has_thread_or_jobs(CHAT.thread_key)
    await store.accept_job("c1", "command", "c1", "slack:T1:C1:other#control", {}, 60)
    assert not await store.has_thread_or_jobs("slack:T1:C1:other")  # another lane's job


async def test_other_lanes_of_a_chat_do_not_count_as_its_waiting_messages(store: Store) -> None:
    await store.accept_job("c1", "command", "c1", CHAT.thread_key + "#control", {}, 60)
    assert (await store.chat_status(CHAT.thread_key)).outstanding == 0


def test_thread_ids_tell_when_they_were_made() -> None:
    now = time.time()
    thread_id = new_thread_id(now)
    assert len(thread_id) == 32 and int(thread_id, 16) >= 0
    assert abs(thread_started_at(thread_id, now) - now) < 0.001
    assert len({new_thread_id(now) for _ in range(100)}) == 100


def test_old_random_thread_ids_have_no_age() -> None:
    assert thread_started_at("0" * 12 + "7" + "0" * 19) is None  # 1970: not one of ours
    assert thread_started_at("f" * 32) is None
    assert thread_started_at("terminal-1234") is None
    future = new_thread_id(time.time() + 86_400)
    assert thread_started_at(future) is None
