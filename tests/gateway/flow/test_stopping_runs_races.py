"""``/cancel`` at the edges of a run (``flow.stops``, ``flow.withdrawals``): sent in the same second
the run's message was accepted (Telegram's whole seconds), sent just before the next run started,
a run on another replica after a stop, and an aside among the waiting messages."""

from __future__ import annotations

import asyncio
import itertools
import math
import time
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageJob, Sender
from clarigate.gateway.flow.stops import RunStopped, stops_of
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job

STOPPED = "■ Stopped. What was already done stays done."
_EVENTS = itertools.count()


def _message(chat: TestAdapter, text: str, at: float | None = None, **fields: Any) -> InboundMessage:
    """A message written at ``at`` as Telegram dates one (whole seconds) to ``chat``'s ``c1``."""
    room = fields.pop("room", False)
    conv = chat.conversation("room", "t", False) if room else chat.conversation()
    timing = {} if at is None else {"received_at": at, "received_within": 1.0}
    sender = Sender(user_id=fields.pop("user", "u1"))
    event = f"race-{next(_EVENTS)}"
    return InboundMessage(conversation=conv, sender=sender, text=text, event_id=event, **timing, **fields)


def held_running_job(store: Any, task: InboundMessage, monkeypatch: pytest.MonkeyPatch) -> Job:
    """The job of ``task`` as a run holds it, listed by ``store.waiting_jobs`` as Redis lists a job
    still held (XPENDING) while it runs."""
    entry = f"{int(time.time() * 1000)}-0"
    order_key = task.conversation.thread_key
    job = Job(entry_id=entry, kind="message", inbound_id="test:e1", order_key=order_key, seq=1)
    job.payload_json = MessageJob(message=task).model_dump_json()

    async def held(order_key: str, limit: int) -> list[Job]:
        return [job]

    monkeypatch.setattr(store, "waiting_jobs", held)
    return job


async def _until(check: Any, seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never came")


async def test_a_message_already_running_is_not_reported_withdrawn(store: Store, make_gateway):
    """A ``/cancel`` of the same whole second as the run's message stops nothing (it may have been
    written first); the running message is not "withdrawn" either: it is answered."""
    started, go = asyncio.Event(), asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "a long task":
            started.set()
            await go.wait()
        return TurnOutput(replies=[f"done: {turn.text}"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    second = math.floor(time.time()) + 1
    await gateway.accept(_message(chat, "a long task", second))
    await asyncio.wait_for(started.wait(), 5)
    await gateway.accept(_message(chat, "/cancel", second))
    await _until(lambda: chat.texts())
    go.set()
    await asyncio.wait_for(gateway.drain(), 10)

    assert "done: a long task" in chat.texts()
    assert not any("Withdrawn" in text for text in chat.texts())


async def test_a_message_running_on_another_replica_is_not_reported_withdrawn(redis_stores, monkeypatch):
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis
    ada = Sender(user_id="ada", display_name="Ada")
    conv = Conversation(platform="test", chat_id="c-w", chat_type="private")
    second = math.floor(time.time()) + 1
    task = InboundMessage(
        conversation=conv, sender=ada, text="a long task", event_id="e1", received_at=second
    )
    job = held_running_job(here, task, monkeypatch)
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ada, job, lambda: asyncio.sleep(30)))
    await asyncio.sleep(0.2)  # the run's process is subscribed to the stop channel
    cancel = InboundMessage(
        conversation=conv, sender=ada, text="/cancel", event_id="e2", received_at=second, received_within=1.0
    )
    said = await stops_of(here).cancel(cancel, outstanding=1, locale="en", policy="starter")
    try:
        assert said is not None and "Withdrawn" not in said.text
        assert not run.done()  # sent maybe before it: not stopped either
    finally:
        run.cancel()


async def test_a_message_whose_run_just_ended_is_not_reported_withdrawn(redis_stores, monkeypatch):
    """Its run over, its answer on its way: its job is not completed yet, nor waiting."""
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis
    ada = Sender(user_id="ada", display_name="Ada")
    conv = Conversation(platform="test", chat_id="c-e", chat_type="private")
    task = InboundMessage(conversation=conv, sender=ada, text="a quick one", event_id="e1")
    entry = f"{int(time.time() * 1000)}-0"
    job = Job(entry_id=entry, kind="message", inbound_id="test:e1", order_key=conv.thread_key, seq=1)
    job.payload_json = MessageJob(message=task).model_dump_json()

    async def held(order_key: str, limit: int) -> list[Job]:
        return [job]  # the job's answer is being sent: still held (XPENDING)

    await stops_of(there).during(conv.thread_key, ada, job, lambda: asyncio.sleep(0))
    for where in (here, there):  # asked through Redis, and in the run's own process
        monkeypatch.setattr(where, "waiting_jobs", held)
        cancel = InboundMessage(conversation=conv, sender=ada, text="/cancel", event_id="e2")
        said = await stops_of(where).cancel(cancel, outstanding=1, locale="en", policy="starter")
        assert said is not None and "Withdrawn" not in said.text


async def test_a_quick_second_cancel_does_not_stop_the_next_run(store: Store, make_gateway):
    started: dict[str, asyncio.Event] = {"x": asyncio.Event(), "y": asyncio.Event()}

    async def script(turn: Turn) -> TurnOutput:
        started[turn.text].set()
        await asyncio.sleep(30 if turn.text == "x" else 1)
        return TurnOutput(replies=[f"done: {turn.text}"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    await chat.say("x")
    await asyncio.wait_for(started["x"].wait(), 5)
    await chat.say("y")
    written = time.time()  # the second /cancel, written now, handled once y runs
    await chat.say("/cancel")
    await asyncio.wait_for(started["y"].wait(), 5)
    await gateway.accept(_message(chat, "/cancel", received_at=written))
    await asyncio.wait_for(gateway.drain(), 10)

    assert "done: y" in chat.texts()
    assert chat.texts().count(STOPPED) == 1


async def test_the_next_run_on_another_replica_can_be_stopped_right_after_a_stop(redis_stores):
    a = redis_stores()
    b = redis_stores(a.prefix)  # another replica on the same Redis
    c = redis_stores(a.prefix)  # a third one
    ada = Sender(user_id="ada", display_name="Ada")
    conv = Conversation(platform="test", chat_id="c-r", chat_type="private")

    def job(n: int) -> Job:
        entry = f"{int(time.time() * 1000)}-{n}"
        return Job(entry_id=entry, kind="message", inbound_id=f"test:{n}", order_key=conv.thread_key, seq=n)

    def cancel(where: Store) -> Any:
        msg = InboundMessage(platform="test", event_id="e", conversation=conv, sender=ada, text="/cancel")
        return stops_of(where).cancel(msg, outstanding=1, locale="en", policy="starter")

    async def stopped_from(where: Store, n: int, runs_on: Store) -> None:
        slow = lambda: asyncio.sleep(30)  # noqa: E731
        run = asyncio.ensure_future(stops_of(runs_on).during(conv.thread_key, ada, job(n), slow))
        await asyncio.sleep(0.2)  # the run's process is subscribed to the stop channel
        try:
            assert await cancel(where) is None  # stopping: the run's own line answers
            with pytest.raises(RunStopped):
                await asyncio.wait_for(run, 5)
        finally:
            run.cancel()

    await stopped_from(a, 1, runs_on=a)
    await stopped_from(a, 2, runs_on=b)  # a stopped a run a moment ago: it asks b all the same
    await stopped_from(c, 3, runs_on=b)  # a's "stopped a moment ago" does not answer for b's run


async def test_a_remark_to_someone_else_is_not_withdrawn(store: Store, make_gateway):
    started = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "a long task":
            started.set()
            await asyncio.sleep(30)
        return TurnOutput(replies=[f"done: {turn.text}"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    await gateway.accept(_message(chat, "a long task", user="ann", room=True, is_mention=True))
    await asyncio.wait_for(started.wait(), 5)
    aside = _message(chat, "<@carol> what do you think?", user="bob", room=True, said_to_others=True)
    await gateway.accept(aside)
    await gateway.accept(_message(chat, "/cancel", user="bob", room=True, is_mention=True))
    await _until(lambda: chat.texts("room"))

    assert not any("Withdrawn" in text for text in chat.texts("room"))
    await gateway.accept(_message(chat, "/cancel", user="ann", room=True, is_mention=True))
    await asyncio.wait_for(gateway.drain(), 10)
