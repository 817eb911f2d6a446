"""Jobs a consumer declines (it lacks their platform): handed back uncounted, left to others.

Both stores: ``decline_jobs`` and ``claim_stale_jobs(skip=…)``.
"""

from __future__ import annotations

import time

from clarigate.gateway.store import Store


async def test_declined_jobs_are_left_to_others_until_the_cutoff(store: Store) -> None:
    await store.accept_job("e1", "message", "other:e1", "other:w1:c1:-", {}, 60)
    await store.accept_job("e2", "message", "test:e2", "test:w1:c1:-", {}, 60)
    first, second = await store.read_jobs("lacking", count=10, block_ms=0)
    await store.decline_jobs("lacking", [first.entry_id, second.entry_id])

    skip = (frozenset({"other"}), time.time() - 60)
    (claimed,) = await store.claim_stale_jobs("lacking", min_idle_ms=600_000, count=10, skip=skip)
    assert claimed.entry_id == second.entry_id  # its platform is not skipped
    assert await store.claim_stale_jobs("lacking", min_idle_ms=600_000, count=10, skip=skip) == []

    (taken,) = await store.claim_stale_jobs("having", min_idle_ms=600_000, count=10)
    assert (taken.entry_id, taken.deliveries) == (first.entry_id, 1)  # the declined read not counted


async def test_declined_jobs_past_the_cutoff_are_claimed_anyway(store: Store) -> None:
    await store.accept_job("e1", "message", "other:e1", "other:w1:c1:-", {}, 60)
    (job,) = await store.read_jobs("lacking", count=10, block_ms=0)
    await store.decline_jobs("lacking", [job.entry_id])

    skip = (frozenset({"other"}), time.time() + 60)  # accepted before the cutoff: to be ended
    (claimed,) = await store.claim_stale_jobs("lacking", min_idle_ms=600_000, count=10, skip=skip)
    assert claimed.entry_id == job.entry_id
