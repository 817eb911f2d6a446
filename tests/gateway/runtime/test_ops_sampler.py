"""The metrics sampler's cost does not grow with what the store holds: the open clarifications'
gauges come from the store's index of open ones, a fixed number of Redis commands per sample
(counted on the wire, through a proxy in front of the real Redis)."""

from __future__ import annotations

import time

from prometheus_client import REGISTRY

from clarigate.gateway.runtime.ops import OpsSampler
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.records import PendingRecord
from tests.gateway.store.test_store_contract import answer, pending_record
from tests.gateway.tcp_proxy import OutageProxy

HOUR, DAY = 3600.0, 86400.0


def asked(request_id: str, age: float, ttl: float = 7 * DAY) -> PendingRecord:
    created = time.time() - age
    record = pending_record(request_id, thread_id=f"th-{request_id}")
    return record.model_copy(update={"created_at": created, "expires_at": created + ttl})


def open_gauges() -> dict[str, float | None]:
    return {
        age: REGISTRY.get_sample_value("clarigate_pending_clarifications", {"age": age})
        for age in ("lt_1h", "1h_to_1d", "gt_1d")
    }


async def test_a_sample_costs_the_same_commands_with_3_or_300_records_stored(redis_stores, make_gateway):
    store = redis_stores()
    proxy = OutageProxy(6379)
    await proxy.start()
    gateway, _ = await make_gateway(MemoryStore("ops"), bot_id=store.prefix)
    sampler = OpsSampler(gateway, f"redis://127.0.0.1:{proxy.port}/0")
    try:
        for record in (asked("young", 60), asked("hours", 2 * HOUR), asked("days", 3 * DAY)):
            await store.save_pending(record)
        await store.save_pending(asked("answered", 60))
        assert (await store.claim_answer("answered", record.asked_by, answer("answered"))).status == "claimed"
        await store.save_pending(asked("expired", 8 * DAY, ttl=7 * DAY + 1))  # its record is gone already
        await sampler.sample_once()  # connects
        assert open_gauges() == {"lt_1h": 1, "1h_to_1d": 1, "gt_1d": 1}  # neither answered nor expired

        before = proxy.commands
        await sampler.sample_once()
        few = proxy.commands - before

        for n in range(300):
            await store.save_pending(asked(f"more-{n}", 30))
        for n in range(0, 300, 3):
            await store.claim_answer(f"more-{n}", record.asked_by, answer(f"more-{n}"))
        before = proxy.commands
        await sampler.sample_once()
        many = proxy.commands - before

        assert open_gauges() == {"lt_1h": 201, "1h_to_1d": 1, "gt_1d": 1}
        assert few == many  # the same commands, however many records the store holds
        assert few <= 10
    finally:
        await sampler.stop()
        await proxy.cut()
