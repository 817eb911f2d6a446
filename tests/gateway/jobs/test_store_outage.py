"""Redis unreachable in the middle of a job: the job stays held and waits, the message is answered
once when Redis is back, and the person is told once ("your message is kept") only when the
outage outlasts a few seconds. Never an error reply.

A real Redis behind a TCP proxy that is cut while the agent runs (so recording its reply fails).
"""

from __future__ import annotations

import asyncio
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import catalog
from tests.gateway.tcp_proxy import OutageProxy

from .crash import eventually

KEPT = catalog.text("store_unavailable", "en")


async def outage_during_the_run(redis_stores: Any, make_gateway: Any, seconds: float) -> tuple[Any, Any]:
    proxy = OutageProxy(6379)
    await proxy.start()
    restored: list[asyncio.Task[None]] = []

    async def run(turn: Turn) -> TurnOutput:
        await proxy.cut()  # Redis goes away while the agent runs

        async def later() -> None:
            await asyncio.sleep(seconds)
            await proxy.restore()

        restored.append(asyncio.create_task(later()))
        return TurnOutput(replies=[f"You said: {turn.text}"])

    runner = ScriptedRunner(run)
    store = redis_stores(url=f"redis://127.0.0.1:{proxy.port}/0")
    gateway, chat = await make_gateway(store, runner, stale_claim_seconds=30.0)
    await chat.say("hello")
    await eventually(lambda: "You said: hello" in chat.texts(), within=60)
    await eventually(lambda: gateway.pool.busy == 0, within=30)
    return chat, runner


async def test_a_short_store_outage_costs_nothing_the_person_sees(redis_stores, make_gateway):
    chat, runner = await outage_during_the_run(redis_stores, make_gateway, 1.0)

    assert chat.texts() == ["You said: hello"]  # no notice, no apology
    assert len(runner.calls) == 1  # run once


async def test_a_long_store_outage_is_told_once_then_answered(redis_stores, make_gateway):
    chat, runner = await outage_during_the_run(redis_stores, make_gateway, 7.0)

    assert chat.texts() == [KEPT, "You said: hello"]
    assert len(runner.calls) == 1
