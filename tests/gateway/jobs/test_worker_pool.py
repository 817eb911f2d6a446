"""The worker pool: order per chat thread, run slots for runs only, waiting jobs woken not polling."""

from __future__ import annotations

import asyncio
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.store import Store


class Gate:
    """A script that holds the run of the text ``block`` until released; answers everything else."""

    def __init__(self, question_in: str = "") -> None:
        self.release = asyncio.Event()
        self.blocked = asyncio.Event()
        self.question_in = question_in
        self.started: list[str] = []

    async def __call__(self, turn: Turn) -> TurnOutput:
        self.started.append(turn.text)
        if turn.text == "block":
            self.blocked.set()
            await self.release.wait()
        if turn.text == self.question_in:
            return asking(choice_request("Which region?", ["eu", "us"]))
        return TurnOutput(replies=[f"did {turn.text}"])


def count_calls(store: Store, name: str) -> list[Any]:
    """Record each call of the store method ``name``."""
    calls: list[Any] = []
    real = getattr(store, name)

    async def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return await real(*args, **kwargs)

    setattr(store, name, counted)
    return calls


async def test_a_busy_worker_runs_queued_messages_in_order_with_one_reply_each(store: Store, make_gateway):
    gate = Gate()
    gateway, chat = await make_gateway(store, ScriptedRunner(gate), workers=1)
    await chat.say("block", chat="b")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    for text in ("a1", "a2", "c1", "a3"):
        await chat.say(text, chat="c" if text.startswith("c") else "a")

    gate.release.set()
    await gateway.drain()

    assert sorted(gate.started) == ["a1", "a2", "a3", "block", "c1"]
    assert [text for text in gate.started if text.startswith("a")] == ["a1", "a2", "a3"]
    assert chat.texts("a") == ["did a1", "did a2", "did a3"] and chat.texts("c") == ["did c1"]


async def test_a_typed_answer_queued_behind_a_busy_worker_still_answers_the_question(
    store: Store, make_gateway
):
    gate = Gate(question_in="deploy")
    runner = ScriptedRunner(gate)
    gateway, chat = await make_gateway(store, runner, workers=1)
    await chat.say("deploy", chat="a")
    await gateway.drain()
    assert len(chat.requests()) == 1

    await chat.say("block", chat="b")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    await chat.say("eu", chat="a")  # typed while the only worker is busy
    gate.release.set()
    await gateway.drain()

    answered = runner.calls[-1]
    assert answered.response is not None and answered.response.value == "eu"
    assert len(chat.closed()) == 1


async def test_messages_queued_on_one_thread_are_woken_not_polling(store: Store, make_gateway):
    gate = Gate()
    gateway, chat = await make_gateway(store, ScriptedRunner(gate), workers=2)
    await chat.say("block", chat="a")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    turn_checks = count_calls(store, "next_seq")
    for i in range(20):
        await chat.say(f"m{i}", chat="a")
    await asyncio.sleep(0.5)  # long enough for ~100 polls each at the old rate

    gate.release.set()
    await gateway.drain()

    assert chat.texts("a") == ["did block"] + [f"did m{i}" for i in range(20)]
    # each queued job asks for its turn about once, when the job before it ended
    assert len(turn_checks) <= 2 * 20


class SlowToRecoverPlatform(TestAdapter):
    """A platform that refuses replies to chat ``down`` until ``recover`` is set."""

    recover: asyncio.Event

    async def send(self, conversation, item):
        if isinstance(item, TextReply) and conversation.chat_id == "down" and not self.recover.is_set():
            raise ConnectionError("platform API unavailable")
        return await super().send(conversation, item)


async def test_a_reply_waiting_for_the_platform_holds_no_run_slot(store: Store, make_gateway):
    SlowToRecoverPlatform.recover = asyncio.Event()
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, workers=1, adapter_class=SlowToRecoverPlatform)

    await chat.say("first", chat="down")
    for _ in range(500):  # its run ended; its reply is being retried
        if runner.calls:
            break
        await asyncio.sleep(0.01)
    await chat.say("second", chat="up")
    for _ in range(500):
        if chat.texts("up"):
            break
        await asyncio.sleep(0.01)

    assert chat.texts("up") == ["You said: second"]  # ran and answered with the only slot
    assert chat.texts("down") == []
    SlowToRecoverPlatform.recover.set()
    await gateway.drain(timeout=30)
    assert chat.texts("down") == ["You said: first"]
    assert [c.text for c in runner.calls] == ["first", "second"]
