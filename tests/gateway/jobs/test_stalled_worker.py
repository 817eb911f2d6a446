"""A replica that stalls past the stale-claim time and then resumes never sends a second reply."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.base import Store


class Partition:
    """Cuts ``store``'s job keeping and claiming off from Redis until ``heal`` (a stalled replica)."""

    def __init__(self, store: Store) -> None:
        self.healed = asyncio.Event()
        self.calls_since_healed: list[str] = []
        for name in ("keep_jobs", "claim_stale_jobs"):
            setattr(store, name, self._cut(name, getattr(store, name)))

    def _cut(self, name, real):
        async def partitioned(*args, **kwargs):
            if not self.healed.is_set():
                raise ConnectionError("Redis unreachable from this replica")
            self.calls_since_healed.append(name)
            return await real(*args, **kwargs)

        return partitioned

    def heal(self) -> None:
        """Let the calls through again."""
        self.healed.set()


async def wait_until(condition) -> None:
    """Poll ``condition()`` until true (what the user eventually sees, not a timing), up to 10 s."""
    for _ in range(1000):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not reached")


async def test_a_worker_resuming_after_its_job_was_taken_over_stays_silent(redis_stores, make_gateway):
    resume = asyncio.Event()
    started = asyncio.Event()

    async def slow(turn: Turn) -> TurnOutput:
        started.set()
        await resume.wait()
        return TurnOutput(replies=["late answer from the stalled replica"])

    stalled_store = redis_stores()
    stalled, chat = await make_gateway(stalled_store, ScriptedRunner(slow))
    partition = Partition(stalled_store)
    healthy_runner = ScriptedRunner()
    healthy, other_chat = await make_gateway(redis_stores(stalled_store.prefix), healthy_runner, start=False)

    await chat.say("long task")
    await asyncio.wait_for(started.wait(), 5)
    await healthy.start()  # only now, so the stalled replica is the one that read the message
    await wait_until(lambda: other_chat.texts() == ["You said: long task"])  # taken over and answered
    partition.heal()
    resume.set()
    await wait_until(lambda: stalled.pool.busy == 0)  # its run ended (silently, or with a late reply)

    assert chat.texts() + other_chat.texts() == ["You said: long task"]


async def test_a_worker_resuming_while_the_other_still_runs_does_not_take_the_job_back(
    redis_stores, make_gateway
):
    resume = asyncio.Event()
    started = asyncio.Event()
    second_started = asyncio.Event()
    second_may_finish = asyncio.Event()

    async def slow(turn: Turn) -> TurnOutput:
        started.set()
        await resume.wait()
        return TurnOutput(replies=["late answer from the stalled replica"])

    async def taker(turn: Turn) -> TurnOutput:
        second_started.set()
        await second_may_finish.wait()
        return TurnOutput(replies=["answer from the replica that took over"])

    stalled_store = redis_stores()
    stalled, chat = await make_gateway(stalled_store, ScriptedRunner(slow))
    partition = Partition(stalled_store)
    healthy, other_chat = await make_gateway(
        redis_stores(stalled_store.prefix), ScriptedRunner(taker), start=False
    )

    await chat.say("long task")
    await asyncio.wait_for(started.wait(), 5)
    await healthy.start()  # only now, so the stalled replica is the one that read the message
    await asyncio.wait_for(second_started.wait(), 10)  # the healthy replica took the job over
    partition.heal()
    await wait_until(lambda: "keep_jobs" in partition.calls_since_healed)  # must not take the job back
    resume.set()
    await wait_until(lambda: stalled.pool.busy == 0)  # its run ended (silently, or with a late reply)
    second_may_finish.set()
    await wait_until(lambda: healthy.pool.busy == 0)

    assert chat.texts() + other_chat.texts() == ["answer from the replica that took over"]
