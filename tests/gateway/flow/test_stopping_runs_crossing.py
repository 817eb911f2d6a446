"""``/cancel`` of a run held by another process when things cross on the stop channel
(``flow.stops``, ``flow.stop_asks``, ``store.redis_stops``): the run ends just as its process takes
the stop's mark, a stop comes as an idle process subscribes (heard live and replayed), and an
answer that cannot be sent. The person always gets one answer, and a run is stopped when asked."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.flow.stops import RunStopped, StopOutcome, stops_of
from clarigate.gateway.store.records import Job

ADA = Sender(user_id="ada", display_name="Ada")


async def _until(check: Any, seconds: float = 10) -> None:
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never came")


def _thread(chat: str) -> tuple[Conversation, Job]:
    """A chat thread and its job to run."""
    conv = Conversation(platform="test", chat_id=chat, chat_type="private")
    job = Job(entry_id="1-0", kind="message", inbound_id=f"test:{chat}", order_key=conv.thread_key, seq=1)
    return conv, job


def _cancel(conv: Conversation) -> InboundMessage:
    """Ada's ``/cancel`` of the thread's run, sent now (after it started)."""
    return InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id=f"{conv.chat_id}-cancel")


async def _subscribed(store: Any) -> None:
    """``store``'s process listens on the stop channel (its first run or stop subscribes it)."""
    registry = stops_of(store)
    registry._listen()
    assert registry._listening is not None
    await asyncio.wait_for(asyncio.shield(registry._listening), 5)


async def test_a_run_ending_as_its_process_takes_the_stop_still_gets_the_cancel_an_answer(redis_stores):
    """The run's process judges "stopping" and takes the stop's mark; the run ends (its answer
    sent) during that round trip: the ``/cancel`` is still answered (nothing to cancel)."""
    here = redis_stores()
    there = redis_stores(here.prefix)
    conv, job = _thread("c-ends-as-claimed")
    finish = asyncio.Event()

    async def answers() -> str:
        await finish.wait()
        return "the answer"

    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ADA, job, answers))
    real_first_time = there.first_time

    async def ending_meanwhile(key: str, seconds: int) -> bool:
        if key.startswith("stop-claim:"):
            finish.set()  # the run ends just as the mark is asked for
            await asyncio.wait_for(asyncio.shield(run), 5)
        return await real_first_time(key, seconds)

    there.first_time = ending_meanwhile  # type: ignore[method-assign]
    await _subscribed(there)
    stop = await stops_of(here).stop(_cancel(conv), outstanding=1, locale="en", policy="starter")
    assert await asyncio.wait_for(run, 5) == "the answer"  # it answered: not stopped
    assert stop.outcome is not StopOutcome.STOPPING
    assert stop.reply is not None and "no open question to cancel" in stop.reply.text


async def test_a_stop_heard_twice_by_an_idle_process_still_stops_the_run(redis_stores):
    """An idle process subscribing as the stop comes hears it live and replayed; it answers once,
    so the ``/cancel`` waits for the run's process (its mark taken a moment later): the run stops."""
    here = redis_stores()
    idle = redis_stores(here.prefix)
    there = redis_stores(here.prefix)
    conv, job = _thread("c-heard-twice")
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ADA, job, lambda: asyncio.sleep(30)))
    await _subscribed(there)
    await _subscribed(here)

    subscribing, published, idle_answers = asyncio.Event(), asyncio.Event(), []
    real_replay, real_idle_publish = idle._replay_stops, idle.publish_stop
    real_here_publish, real_first_time = here.publish_stop, there.first_time

    async def replay_once_published() -> None:
        subscribing.set()  # subscribed (Redis confirmed it): the stop is published now
        await published.wait()
        await real_replay()

    async def publish_then_say(message: dict[str, Any], keep: bool = False) -> int:
        listening = await real_here_publish(message, keep)
        published.set()
        return listening

    async def counted(message: dict[str, Any], keep: bool = False) -> int:
        idle_answers.append(message)
        return await real_idle_publish(message, keep)

    async def mark_later(key: str, seconds: int) -> bool:
        if key.startswith("stop-claim:"):  # the run's process takes the mark after the idle one answered
            await _until(lambda: idle_answers)
            await asyncio.sleep(0.05)
        return await real_first_time(key, seconds)

    idle._replay_stops = replay_once_published  # type: ignore[method-assign]
    idle.publish_stop = counted  # type: ignore[method-assign]
    here.publish_stop = publish_then_say  # type: ignore[method-assign]
    there.first_time = mark_later  # type: ignore[method-assign]
    stops_of(idle)._listen()
    await asyncio.wait_for(subscribing.wait(), 5)
    try:
        stop = await stops_of(here).stop(_cancel(conv), outstanding=1, locale="en", policy="starter")
        assert stop.outcome is StopOutcome.STOPPING and stop.reply is None  # its "stopped" line answers
        with pytest.raises(RunStopped):
            await asyncio.wait_for(run, 5)
    finally:
        run.cancel()


async def test_a_stop_published_as_a_process_subscribes_is_handed_on_once(redis_stores):
    here = redis_stores()
    there = redis_stores(here.prefix)
    subscribing, published, heard = asyncio.Event(), asyncio.Event(), []
    real_replay = there._replay_stops

    async def replay_once_published() -> None:
        subscribing.set()
        await published.wait()
        await real_replay()

    there._replay_stops = replay_once_published  # type: ignore[method-assign]
    listening = asyncio.ensure_future(there.listen_stops(heard.append))
    await asyncio.wait_for(subscribing.wait(), 5)
    stop = {"op": "stop", "thread": "t1", "reply": "n1"}
    assert await here.publish_stop(stop, keep=True) == 1  # live, and recorded for the replay
    published.set()
    await listening
    answer = {"op": "verdict", "verdict": "none", "reply": "n1", "jobs": []}
    assert await here.publish_stop(answer) == 1  # two processes' answers alike: both handed on
    assert await here.publish_stop(answer) == 1
    await _until(lambda: len([m for m in heard if m["op"] == "verdict"]) == 2)
    assert [m for m in heard if m["op"] == "stop"] == [stop]


async def test_a_stop_that_cannot_be_answered_is_logged(redis_stores, caplog):
    here = redis_stores()
    there = redis_stores(here.prefix)

    async def failing(message: dict[str, Any], keep: bool = False) -> int:
        raise ConnectionError("Redis away")

    there.publish_stop = failing  # type: ignore[method-assign]
    stop = {"op": "stop", "thread": "t1", "by": ADA.model_dump(mode="json"), "sent_at": 0.0}
    with caplog.at_level(logging.WARNING, logger="clarigate.gateway.flow.stops"):
        stops_of(there)._heard({**stop, "policy": "starter", "reply": "n1", "from": "elsewhere"})
        await _until(lambda: any(r.levelno == logging.WARNING for r in caplog.records))
    [warned] = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert "ConnectionError" in warned.getMessage() and "t1" in warned.getMessage()
