"""Per-thread order: one run at a time per chat thread, in arrival order; other threads run meanwhile."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.base import Store


class Gate:
    """A script that blocks on the text ``block`` until released and records start/end order."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.blocked = asyncio.Event()
        self.events: list[str] = []

    async def __call__(self, turn: Turn) -> TurnOutput:
        self.events.append(f"start {turn.text}")
        if turn.text == "block":
            self.blocked.set()
            await self.release.wait()
        self.events.append(f"end {turn.text}")
        return TurnOutput(replies=[turn.text])


async def test_one_thread_runs_in_order_while_another_runs(store: Store, make_gateway):
    gate = Gate()
    gateway, chat = await make_gateway(store, ScriptedRunner(gate), workers=4)

    await chat.say("block", chat="a")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    for text in ("a2", "a3", "a4"):
        await chat.say(text, chat="a")
    await chat.say("b1", chat="b")
    for _ in range(200):  # until the other thread's run has finished
        if "end b1" in gate.events:
            break
        await asyncio.sleep(0.01)

    assert gate.events == ["start block", "start b1", "end b1"]  # a2..a4 wait their turn, none refused
    gate.release.set()
    await gateway.drain()

    a_events = [e for e in gate.events if not e.endswith("b1")]
    assert a_events == [
        "start block",
        "end block",
        "start a2",
        "end a2",
        "start a3",
        "end a3",
        "start a4",
        "end a4",
    ]
    assert chat.texts("a") == ["block", "a2", "a3", "a4"]
    assert chat.texts("b") == ["b1"]


async def test_a_burst_to_one_thread_keeps_arrival_order(store: Store, make_gateway):
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[turn.text]))
    gateway, chat = await make_gateway(store, runner, workers=4)

    for i in range(12):
        await chat.say(f"m{i}")
    await gateway.drain()

    assert [c.text for c in runner.calls] == [f"m{i}" for i in range(12)]
