"""Out-of-turn commands (/status, /help) answer while every run slot of the replica is busy:
the reader still reads the stream for them (they run without a run slot)."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.base import Store


class LongRuns:
    """A scripted agent whose runs (those ``long`` picks, else all) hold their slot until
    ``release``; ``started`` once one began."""

    def __init__(self, long: str | None = None) -> None:
        self.started, self.release = asyncio.Event(), asyncio.Event()
        self.long = long
        self.ran: list[str] = []

    async def script(self, turn: Turn) -> TurnOutput:
        self.ran.append(turn.text)
        if self.long is None or turn.text == self.long:
            self.started.set()
            await self.release.wait()
        return TurnOutput(replies=[f"done: {turn.text}"])


async def _wait_texts(chat, n: int, chat_id: str = "c1", seconds: float = 3.0) -> list[str]:
    for _ in range(int(seconds / 0.02)):
        if len(chat.texts(chat_id)) >= n:
            break
        await asyncio.sleep(0.02)
    return chat.texts(chat_id)


async def test_status_answers_at_once_while_every_run_slot_is_busy(store: Store, make_gateway):
    runs = LongRuns()
    started, release, script = runs.started, runs.release, runs.script

    gateway, chat = await make_gateway(store, ScriptedRunner(script), workers=1)
    await chat.say("a long task")  # the only run slot: busy
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/status")
    texts = await _wait_texts(chat, 1)
    release.set()
    await gateway.drain()
    # README: "/cancel, /status, /help and /start answer at once, even while a long run is going"
    assert texts and "• Messages being worked on or waiting" in texts[0], texts


async def test_help_in_another_chat_answers_while_every_run_slot_is_busy(store: Store, make_gateway):
    runs = LongRuns()
    started, release, script = runs.started, runs.release, runs.script

    gateway, chat = await make_gateway(store, ScriptedRunner(script), workers=2)
    await chat.say("a long task", chat="x")
    await chat.say("another long task", chat="y")
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.2)

    await chat.say("/help", chat="z")
    texts = await _wait_texts(chat, 1, "z")
    release.set()
    await gateway.drain()
    assert texts and texts[0].startswith("Just write what you need."), texts


async def test_messages_read_while_every_slot_is_busy_still_run_in_order_after_the_command(
    store: Store, make_gateway
):
    runs = LongRuns(long="long")
    started, release, script, ran = runs.started, runs.release, runs.script, runs.ran

    gateway, chat = await make_gateway(store, ScriptedRunner(script), workers=1)
    await chat.say("long", chat="a")
    await asyncio.wait_for(started.wait(), 5)
    for text in ("b1", "b2"):
        await chat.say(text, chat="b")
    await chat.say("/status", chat="c")
    assert (await _wait_texts(chat, 1, "c"))[:1], "no answer to /status while the slot is busy"
    assert ran == ["long"]  # the messages read with it wait for the one run slot

    release.set()
    await gateway.drain()
    assert ran == ["long", "b1", "b2"]
    assert chat.texts("b") == ["done: b1", "done: b2"] and chat.texts("a") == ["done: long"]


async def test_a_busy_replica_leaves_most_of_a_backlog_for_a_replica_with_a_free_slot(
    store: Store, make_gateway
):
    """Read-ahead while busy is bounded (``BUSY_READ_AHEAD``): a replica whose every slot is
    busy does not take the whole backlog off the stream, where another replica would find it."""
    from clarigate.gateway.jobs.worker import BUSY_READ_AHEAD

    runs = LongRuns()
    started, release, script = runs.started, runs.release, runs.script

    gateway, chat = await make_gateway(store, ScriptedRunner(script), workers=1)
    await chat.say("long", chat="a")
    await asyncio.wait_for(started.wait(), 5)
    for i in range(BUSY_READ_AHEAD + 30):
        await chat.say(f"m{i}", chat=f"b{i}")
    await asyncio.sleep(0.5)  # several of the busy reader's polls
    held = len(gateway.pool._held)
    release.set()
    await gateway.drain()
    assert held <= 1 + BUSY_READ_AHEAD, held  # the rest waited in the stream
    assert len(chat.texts()) == BUSY_READ_AHEAD + 31  # and every message was answered
