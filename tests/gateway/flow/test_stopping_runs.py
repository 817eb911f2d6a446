"""``/cancel`` with no question open stops the chat thread's run in progress (``flow.stops``):
in this process, in another one (through Redis), and never for someone else's request."""

from __future__ import annotations

import asyncio
import gc
import weakref
from typing import Any

import pytest
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import tool
from prometheus_client import REGISTRY

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, Sender
from clarigate.gateway.boundary.outbound_items import ErrorReply, TextReply
from clarigate.gateway.flow.stops import RunStopped, stops_of
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.records import Job
from tests.agent.conftest import scripted

NOTHING = "There is no open question to cancel."
STOPPED = "■ Stopped. What was already done stays done."


def _slow_script(started: asyncio.Event, reached: list[str]) -> Any:
    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "a long task":
            started.set()
            await asyncio.sleep(30)
            reached.append(turn.text)  # past the stop point: never
        return TurnOutput(replies=[f"done: {turn.text}"])

    return script


def _runs(state: str) -> float:
    return REGISTRY.get_sample_value("clarigate_runs_total", {"state": state}) or 0.0


async def test_cancel_stops_the_run_in_progress_and_the_next_messages_run(store: Store, make_gateway):
    started, reached = asyncio.Event(), []
    stopped_before = _runs("stopped")
    gateway, chat = await make_gateway(store, ScriptedRunner(_slow_script(started, reached)))
    await chat.say("a long task")
    await asyncio.wait_for(started.wait(), 5)
    await chat.say("and one more thing")  # queued behind the run: still runs, in order

    await chat.say("/cancel")
    await asyncio.wait_for(gateway.drain(), 10)
    await chat.say("next")
    await asyncio.wait_for(gateway.drain(), 10)

    # the stopped line is the /cancel's answer: no "Stopping…" that could come after it
    assert chat.texts() == [STOPPED, "done: and one more thing", "done: next"]
    assert reached == [] and not chat.of_kind("error")
    assert _runs("stopped") == stopped_before + 1  # counted as stopped, not finished nor failed


async def test_someone_elses_cancel_does_not_stop_the_run(store: Store, make_gateway):
    started, reached = asyncio.Event(), []
    gateway, chat = await make_gateway(store, ScriptedRunner(_slow_script(started, reached)))
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("a long task", user="ann", name="Ann", **room)
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/cancel", user="bob", name="Bob", **room)
    for _ in range(100):
        if chat.texts():
            break
        await asyncio.sleep(0.05)
    [refused] = [item for _, item in chat.sent if isinstance(item, TextReply)]
    assert refused.text.startswith("Only Ann can stop the request in progress; it goes on.")
    assert refused.private_to is not None and refused.private_to.user_id == "bob"

    await chat.say("/cancel", user="ann", name="Ann", **room)  # the requester may
    await asyncio.wait_for(gateway.drain(), 10)
    assert chat.texts("room")[1:] == [STOPPED] and reached == []


async def test_a_repeated_cancel_of_someone_elses_run_is_refused_once(store: Store, make_gateway):
    started, reached = asyncio.Event(), []
    gateway, chat = await make_gateway(store, ScriptedRunner(_slow_script(started, reached)))
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("a long task", user="ann", name="Ann", **room)
    await asyncio.wait_for(started.wait(), 5)

    await chat.say("/cancel", user="bob", name="Bob", **room)
    await chat.say("/cancel", user="bob", name="Bob", **room)  # tapped again: not told again
    await asyncio.sleep(0.3)
    assert reached == []  # Ann's run goes on
    await chat.say("/cancel", user="ann", name="Ann", **room)
    await asyncio.wait_for(gateway.drain(), 10)
    notes = [item for _, item in chat.sent if isinstance(item, TextReply) and item.private_to is not None]
    assert [note.private_to.user_id for note in notes if note.private_to] == ["bob"]
    assert notes[0].text.startswith("Only Ann can stop the request in progress; it goes on.")
    assert chat.texts("room")[-1] == STOPPED and reached == []


async def test_a_refusal_decided_in_another_process_is_shown_once_per_run(redis_stores):
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis: it holds the run
    ada, bob = Sender(user_id="ada", display_name="Ada"), Sender(user_id="bob", display_name="Bob")
    conv = Conversation(platform="test", chat_id="c3", chat_type="group")
    slow = lambda: asyncio.sleep(30)  # noqa: E731

    def cancel(where: Store, by: Sender) -> Any:
        msg = InboundMessage(platform="test", event_id="e", conversation=conv, sender=by, text="/cancel")
        return stops_of(where).cancel(msg, outstanding=1, locale="en", policy="starter")

    for entry_id in ("1-0", "2-0"):  # each run of the thread: Bob is told once
        job = Job(
            entry_id=entry_id, kind="message", inbound_id=f"test:{entry_id}", order_key=conv.thread_key, seq=1
        )
        run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ada, job, slow))
        await asyncio.sleep(0.2)  # the run's process is subscribed to the stop channel
        refused = await cancel(here, bob)  # decided by the run's process, through Redis
        assert refused is not None and refused.text.startswith("Only Ada can stop")
        assert await cancel(here, bob) is None  # again: through Redis
        assert await cancel(there, bob) is None  # again: in the run's own process
        assert not run.done()
        assert await cancel(here, ada) is None  # stopping: the run's own line answers
        with pytest.raises(RunStopped):
            await asyncio.wait_for(run, 5)


async def test_a_run_in_another_process_is_stopped_through_redis(redis_stores):
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis
    ada, bob = Sender(user_id="ada", display_name="Ada"), Sender(user_id="bob", display_name="Bob")
    conv = Conversation(platform="test", chat_id="c1", chat_type="group")
    job = Job(entry_id="1-0", kind="message", inbound_id="test:1", order_key=conv.thread_key, seq=1)
    slow = lambda: asyncio.sleep(30)  # noqa: E731
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ada, job, slow))
    await asyncio.sleep(0.2)  # the run's process is subscribed to the stop channel

    def cancel(by: Sender) -> Any:
        msg = InboundMessage(platform="test", event_id="e", conversation=conv, sender=by, text="/cancel")
        return stops_of(here).cancel(msg, outstanding=1, locale="en", policy="starter")

    refused = await cancel(bob)
    assert refused.text.startswith("Only Ada can stop") and refused.private_to == bob
    assert not run.done()
    assert await cancel(ada) is None  # stopping: the run's own line answers
    with pytest.raises(RunStopped):
        await asyncio.wait_for(run, 5)


async def test_a_second_cancel_right_after_a_stop_says_there_is_nothing_to_cancel(redis_stores):
    here = redis_stores()
    there = redis_stores(here.prefix)  # another replica on the same Redis
    ada = Sender(user_id="ada", display_name="Ada")
    conv = Conversation(platform="test", chat_id="c2", chat_type="private")
    job = Job(entry_id="1-0", kind="message", inbound_id="test:2", order_key=conv.thread_key, seq=1)
    slow = lambda: asyncio.sleep(30)  # noqa: E731
    run = asyncio.ensure_future(stops_of(there).during(conv.thread_key, ada, job, slow))
    await asyncio.sleep(0.2)  # the run's process is subscribed to the stop channel

    def cancel(where: Store) -> Any:
        msg = InboundMessage(platform="test", event_id="e", conversation=conv, sender=ada, text="/cancel")
        return stops_of(where).cancel(msg, outstanding=1, locale="en", policy="starter")

    assert await cancel(here) is None
    with pytest.raises(RunStopped):
        await asyncio.wait_for(run, 5)
    # the run is over, its job not yet completed (``outstanding`` 1): not "still working on it"
    for where in (here, there):  # asked through Redis, and in the stopped run's own process
        again = await asyncio.wait_for(cancel(where), 1)
        assert again is not None and again.text == NOTHING


def test_a_store_with_a_stop_registry_is_freed():
    store = MemoryStore("freed")
    assert stops_of(store).store is store
    gone = weakref.ref(store)
    del store
    gc.collect()
    assert gone() is None


@tool
async def slow_lookup(query: str) -> str:
    """Look something up (slowly)."""
    SLOW_TOOL.append("started")
    await asyncio.sleep(30)
    SLOW_TOOL.append("finished")  # past the stop point: never
    return "found"


SLOW_TOOL: list[str] = []


async def test_in_process_the_thread_goes_on_after_a_stop_in_a_tool_call(redis_stores, make_gateway):
    SLOW_TOOL.clear()
    model = scripted(
        {"tool_calls": [{"name": "slow_lookup", "args": {"query": "x"}}]},
        {"content": "Here is what I found."},  # the stopped run's next step: reached only by the next message
    )
    settings = AgentSettings(checkpointer_url="memory://")
    agent = await ClarifyingAgent.create(settings, model=model, tools=[slow_lookup])
    runner = LangGraphRunner(settings, agent=agent)
    try:
        gateway, chat = await make_gateway(redis_stores(), runner)
        await chat.say("look it up")
        for _ in range(200):
            if SLOW_TOOL:
                break
            await asyncio.sleep(0.05)
        await chat.say("/cancel")
        await asyncio.wait_for(gateway.drain(), 10)
        assert chat.texts() == [STOPPED] and SLOW_TOOL == ["started"]
        await chat.say("and now?")
        await asyncio.wait_for(gateway.drain(), 10)
    finally:
        await runner.aclose()
    assert chat.texts()[1:] == ["Here is what I found."] and not chat.of_kind("error")
    assert not any(isinstance(item, ErrorReply) for _, item in chat.sent)
    sent = model.calls[-1]  # the provider is sent a result for the call the stop left open
    calls = [m for m in sent if isinstance(m, AIMessage) and m.tool_calls]
    answered = {m.tool_call_id for m in sent if isinstance(m, ToolMessage)}
    assert calls and all(c["id"] in answered for m in calls for c in m.tool_calls)
