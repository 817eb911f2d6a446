"""``Store.requeue_job``: a job not run yet moves behind every job of its order key in one step
(a message waiting behind an approval's answer clicked after it was queued), on both stores."""

from __future__ import annotations

from clarigate.gateway.store import Store
from clarigate.gateway.store.records import Job


async def _drain(store: Store) -> dict[str, Job]:
    return {j.inbound_id: j for j in await store.read_jobs("w1", count=100, block_ms=0)}


async def test_a_requeued_job_runs_after_the_job_behind_it_and_only_once(store: Store) -> None:
    await store.accept_job("m", "message", "m", "chat", {"text": "hi"}, 60)
    await store.accept_job("a", "answer", "a", "chat", {}, 60)
    jobs = await _drain(store)
    message, answer = jobs["m"], jobs["a"]
    assert await store.requeue_job(message)
    assert not await store.requeue_job(message)  # acknowledged: once
    assert not await store.is_done("m")
    assert await store.next_seq("chat") == 2 == answer.seq
    (again,) = (await _drain(store)).values()
    assert (again.inbound_id, again.kind, again.seq, again.payload) == ("m", "message", 3, {"text": "hi"})
    await store.complete_job(answer)
    assert await store.next_seq("chat") == 3
    await store.complete_job(again)
    await store.accept_job("n", "message", "n", "chat", {}, 60)
    (later,) = (await _drain(store)).values()
    assert later.seq == 1  # caught up: the counters went
