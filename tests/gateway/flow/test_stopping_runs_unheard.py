"""``/cancel`` when the process running the thread's job does not hear it (``flow.stops``): its
subscription to the stop channel is still being made (its first run) or made again (a lost
connection). The running job is not reported withdrawn, and the stop replayed to it once it is
subscribed does not stop the run after the ``/cancel`` was answered (no second, contradictory reply)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.flow import stops
from clarigate.gateway.flow.recalls import due_and_recalled
from clarigate.gateway.flow.stops import RunStopped, StopOutcome, stops_of
from clarigate.gateway.store.records import Job

from .test_stopping_runs_races import held_running_job

ADA = Sender(user_id="ada", display_name="Ada")
STILL_WORKING = (
    "There is no open question to cancel. I am still working on your message; the answer will come here."
)


async def _unheard_run(redis_stores: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any, Any, Any]:
    """A run of job J going on in ``there``, not (yet) subscribed to the stop channel; ``here``
    reads J among the thread's jobs not completed (held: XPENDING); and ``here``'s ``/cancel``."""
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis

    async def not_yet(deliver: Any) -> None:
        return None  # its subscription is still being made

    monkeypatch.setattr(there, "listen_stops", not_yet)
    conv = Conversation(platform="test", chat_id="c-unheard", chat_type="private")
    task = InboundMessage(conversation=conv, sender=ADA, text="a long task", event_id="e1")
    job = held_running_job(here, task, monkeypatch)
    assert await due_and_recalled(there, job) == (None, False)  # its run begins, as a worker's does
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ADA, job, lambda: asyncio.sleep(30)))
    await asyncio.sleep(0.1)
    cancel = InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id="e2")
    return here, there, run, cancel


async def test_a_run_whose_process_did_not_hear_the_stop_is_not_reported_withdrawn(redis_stores, monkeypatch):
    here, _, run, cancel = await _unheard_run(redis_stores, monkeypatch)
    try:
        stop = await stops_of(here).stop(cancel, outstanding=1, locale="en", policy="starter")
        assert stop.outcome is StopOutcome.NOTHING
        assert stop.reply is not None and stop.reply.text == STILL_WORKING
        assert not run.done()
    finally:
        run.cancel()


async def test_the_stop_replayed_after_the_cancel_was_answered_does_not_stop_the_run(
    redis_stores, monkeypatch
):
    here, there, run, cancel = await _unheard_run(redis_stores, monkeypatch)
    try:
        stop = await stops_of(here).stop(cancel, outstanding=1, locale="en", policy="starter")
        assert stop.reply is not None  # the person was answered: nothing to cancel, still working
        # ``there`` subscribes now: the stop recorded meanwhile is handed on to it (``_replay_stops``)
        kept = await there._command("ZRANGE", f"{there.prefix}:stops-log", 0, -1)
        assert kept
        for data in kept:
            stops_of(there)._heard(json.loads(data))
        await asyncio.sleep(0.3)
        assert not run.done()  # it goes on and answers: not a "stopped" line after that reply
    finally:
        run.cancel()


async def test_a_holder_answering_late_stops_its_run_and_the_cancel_says_nothing(redis_stores, monkeypatch):
    """The holder heard the stop in time and stops its run, but its answer comes after
    ``STOP_REPLY_WAIT``: the ``/cancel`` says nothing (the run's own "stopped" line answers)."""
    here = redis_stores()
    there = redis_stores(here.prefix)
    monkeypatch.setattr(stops, "STOP_REPLY_WAIT", 0.5)
    real_publish = there.publish_stop

    async def late(message: dict[str, Any], keep: bool = False) -> int:
        await asyncio.sleep(1.5)
        return await real_publish(message, keep)

    monkeypatch.setattr(there, "publish_stop", late)
    conv = Conversation(platform="test", chat_id="c-late-answer", chat_type="private")
    job = Job(entry_id="1-0", kind="message", inbound_id="test:late", order_key=conv.thread_key, seq=1)
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ADA, job, lambda: asyncio.sleep(30)))
    await asyncio.sleep(0.2)  # subscribed
    cancel = InboundMessage(conversation=conv, sender=ADA, text="/cancel", event_id="e2")
    stop = await stops_of(here).stop(cancel, outstanding=1, locale="en", policy="starter")
    assert stop.outcome is StopOutcome.STOPPING and stop.reply is None
    with pytest.raises(RunStopped):
        await asyncio.wait_for(run, 5)
