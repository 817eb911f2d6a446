"""Replicas of one bot configured with different platforms (a rolling update adding one).

R1 has platforms ``test`` and ``other`` and takes messages in; R2 has only ``test`` and runs
jobs. A job for ``other`` read by R2 is handed back unrun (once a WARNING per platform), is not
claimed by R2 again, and is run by R1 once R1 has workers. With no replica that has the
platform, the job ends within the delivery budget, at ERROR naming the reason.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.gateway.boundary.outbound_items import TextReply

from .crash import eventually


class OtherAdapter(TestAdapter):
    """A second platform, ``other``, only R1 has."""

    platform: ClassVar[str] = "other"

    def replies(self) -> list[str]:
        return [item.text for _, item in self.sent if isinstance(item, TextReply)]


async def _replicas(redis_stores: Any, make_gateway: Any, **config: Any) -> tuple[Any, ...]:
    """R2 (``test`` only, with workers) and R1 (``test`` and ``other``, web only) on one stream."""
    store = redis_stores()
    two, _ = await make_gateway(store, ScriptedRunner(), workers=2, **config)
    one, _ = await make_gateway(redis_stores(store.prefix), ScriptedRunner(), start=False, **config)
    other = OtherAdapter(one)
    one.register(other)
    await one.start(jobs=False)
    return one, two, other


async def test_a_job_for_a_platform_a_replica_lacks_is_run_by_one_that_has_it(
    redis_stores: Any, make_gateway: Any, caplog: Any
):
    caplog.set_level(logging.WARNING)
    one, two, other = await _replicas(redis_stores, make_gateway)
    await other.say("hello")
    await asyncio.sleep(0.5)  # R2 reads it (and declines it)
    await other.say("again")  # R2 knows now: handed back before its turn, no second warning
    await asyncio.sleep(1.0)  # R2's reader and stale claim go round several times meanwhile
    assert two.runner.calls == []
    assert other.sent == []

    one.pool.start()  # R1 now runs jobs too (its workers start)
    await eventually(lambda: len(other.replies()) >= 2, within=15)
    await asyncio.sleep(0.5)  # nothing more comes

    assert other.replies() == ["You said: hello", "You said: again"]
    assert [call.text for call in one.runner.calls] == ["hello", "again"]  # once each, in order
    assert two.runner.calls == []
    warnings = [r for r in caplog.records if "has no platform 'other'" in r.getMessage()]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_job_no_replica_can_deliver_ends_within_the_budget(
    redis_stores: Any, make_gateway: Any, caplog: Any
):
    caplog.set_level(logging.WARNING)
    one, two, other = await _replicas(redis_stores, make_gateway, delivery_budget_seconds=1.5)
    await other.say("hello")
    await eventually(
        lambda: any("no replica has platform 'other'" in r.getMessage() for r in caplog.records), within=10
    )

    (ended,) = [r for r in caplog.records if "no replica has platform 'other'" in r.getMessage()]
    assert ended.levelno == logging.ERROR
    assert two.runner.calls == [] and one.runner.calls == []
    await one.drain(timeout=5)  # the job is complete: nothing stays in the stream
