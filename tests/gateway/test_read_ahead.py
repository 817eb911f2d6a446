"""A completing job reads the next one in the same store call and hands its run slot over."""

from __future__ import annotations

import asyncio
from typing import Any

from agent.harness import TurnOutput
from gateway.store import Store
from gateway.testing import ScriptedRunner, Turn, asking, choice_request
from tests.gateway.test_store_contract import pending_record


async def test_completing_reads_the_next_jobs_with_the_lookups_of_those_whose_turn_came(store: Store):
    await store.accept_job("a1", "message", "a1", "chat-a", {"n": 1}, 60)
    (a1,) = await store.read_jobs("w1", count=10, block_ms=0)
    await store.accept_job("a2", "message", "a2", "chat-a", {"n": 2}, 60)
    await store.accept_job("b1", "message", "b1", "chat-b", {"n": 3}, 60)
    await store.accept_job("b2", "message", "b2", "chat-b", {"n": 4}, 60)
    thread_a = await store.thread_for_chat("chat-a", 3600)
    await store.save_pending(pending_record(thread_id=thread_a))

    a2, b1, b2 = await store.complete_and_read(a1, "w1", 3, 3600)

    assert await store.is_done("a1") and await store.next_seq("chat-a") == 2
    assert [j.inbound_id for j in (a2, b1, b2)] == ["a2", "b1", "b2"]
    assert [j.payload["n"] for j in (a2, b1, b2)] == [2, 3, 4]
    assert a2.turn_ready and a2.thread_lookup is not None
    assert a2.thread_lookup[0] == thread_a and a2.thread_lookup[1] is not None
    assert a2.thread_lookup[1].request_id == "req-1"
    # b1 runs first: its chat thread is mapped in the same step, nothing is open there
    assert b1.turn_ready and b1.thread_lookup == (await store.thread_for_chat("chat-b", 3600), None)
    assert not b2.turn_ready and b2.thread_lookup is None  # b1 is outstanding: b2 waits its turn
    assert await store.read_jobs("w2", count=10, block_ms=0) == []  # delivered once, to w1


async def test_completing_with_nothing_to_read_just_completes(store: Store):
    await store.accept_job("a1", "message", "a1", "chat-a", {}, 60)
    (a1,) = await store.read_jobs("w1", count=10, block_ms=0)
    assert await store.complete_and_read(a1, "w1", 2, 3600) == []
    assert await store.is_done("a1")
    await store.accept_job("a2", "message", "a2", "chat-a", {}, 60)
    (a2,) = await store.read_jobs("w1", count=10, block_ms=0)
    assert a2.seq == 1  # caught up: the turnstile was reset as by complete_job


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
    lookups = count_calls(store, "thread_with_pending")
    await chat.say("block", chat="b")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    for text in ("a1", "a2", "c1", "a3"):
        await chat.say(text, chat="c" if text.startswith("c") else "a")

    gate.release.set()
    await gateway.drain()

    assert gate.started == ["block", "a1", "a2", "c1", "a3"]
    assert chat.texts("a") == ["did a1", "did a2", "did a3"] and chat.texts("c") == ["did c1"]
    # the queued messages came with their thread lookups: each run started without another trip
    assert len(lookups) == 1


async def test_a_typed_answer_read_with_the_completion_still_answers_the_question(store: Store, make_gateway):
    gate = Gate(question_in="deploy")
    runner = ScriptedRunner(gate)
    gateway, chat = await make_gateway(store, runner, workers=1)
    await chat.say("deploy", chat="a")
    await gateway.drain()
    assert len(chat.requests()) == 1
    lookups = count_calls(store, "thread_with_pending")

    await chat.say("block", chat="b")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    await chat.say("eu", chat="a")  # typed while the only worker is busy: read as "block" completes
    gate.release.set()
    await gateway.drain()

    answered = runner.calls[-1]
    assert answered.response is not None and answered.response.value == "eu"
    assert len(chat.closed()) == 1
    assert lookups == [] or all(args[0] != chat.conversation("a").thread_key for args in lookups)


async def test_a_store_blip_while_completing_and_reading_sends_no_reply_twice(store: Store, make_gateway):
    real = store.complete_and_read
    failures = [ConnectionError("store unreachable")] * 2
    attempts: list[str] = []

    async def flaky(job: Any, *args: Any) -> Any:
        attempts.append(job.inbound_id)
        if failures:
            raise failures.pop()
        return await real(job, *args)

    store.complete_and_read = flaky  # type: ignore[method-assign]
    gate = Gate()
    runner = ScriptedRunner(gate)
    gateway, chat = await make_gateway(store, runner, workers=1)
    await chat.say("block", chat="b")
    await asyncio.wait_for(gate.blocked.wait(), 5)
    await chat.say("after", chat="a")
    gate.release.set()
    await gateway.drain()

    assert len(attempts) >= 3  # the blips were hit and ridden out
    assert chat.texts("b") == ["did block"] and chat.texts("a") == ["did after"]
    assert [turn.text for turn in runner.calls] == ["block", "after"]
