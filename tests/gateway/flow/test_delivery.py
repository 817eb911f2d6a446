"""Delivery: recorded before sending, retried alone, classified, never re-running the agent."""

from __future__ import annotations

import asyncio
import logging

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import retry
from clarigate.gateway.boundary.outbound_items import ClarificationOut, TextReply
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.flow import delivery
from clarigate.gateway.runtime import metrics
from clarigate.gateway.store.base import Store


class ScriptedPlatform(TestAdapter):
    """A platform whose next sends fail as scripted: ``failures`` is popped once per send."""

    failures: list[Exception] = []  # noqa: RUF012 (set per test)
    attempts: list[str | None] = []  # noqa: RUF012 (the delivery id of every attempt)

    async def send(self, conversation, item):
        if isinstance(item, TextReply | ClarificationOut) or item.kind == "error":
            type(self).attempts.append(item.delivery_id)
            if type(self).failures:
                raise type(self).failures.pop(0)
        return await super().send(conversation, item)


def scripted_failures(*failures: Exception) -> None:
    ScriptedPlatform.failures = list(failures)
    ScriptedPlatform.attempts = []


def counted(counter) -> float:
    return counter._value.get()


async def test_replies_are_recorded_before_the_first_send(store: Store, make_gateway):
    seen: list[object] = []

    class Recording(TestAdapter):
        async def send(self, conversation, item):
            if isinstance(item, TextReply):
                seen.append(await store.delivery_record(f"test:{event}"))
            return await super().send(conversation, item)

    event = "rec-1"
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=["one", "two"]))
    gateway, chat = await make_gateway(store, runner, adapter_class=Recording)
    await chat.say("go", event_id=event)
    await gateway.drain()

    assert chat.texts() == ["one", "two"]
    first, second = seen
    assert first is not None and first.outcomes == {}  # both recorded before "one" went out
    assert "two" in first.plan
    assert second.outcomes == {0: "sent"}


async def test_every_item_has_a_stable_delivery_id_of_its_own(store: Store, make_gateway):
    scripted_failures(ConnectionError("reset"))
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=["one", "two"]))
    gateway, chat = await make_gateway(store, runner, adapter_class=ScriptedPlatform)
    await chat.say("go", event_id="ids-1")
    await gateway.drain()

    first, retried, second = ScriptedPlatform.attempts
    assert first == retried != second  # a retry keeps its item's id; items differ
    assert first == delivery.delivery_id("test:ids-1", 0) and second == delivery.delivery_id("test:ids-1", 1)
    assert len(first) == 36  # a UUID: fits Feishu's 50-character uuid


async def test_retry_after_is_honoured(store: Store, make_gateway, monkeypatch):
    waits: list[float] = []

    async def recorded_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", recorded_wait)
    scripted_failures(DeliveryFailed("429", permanent=False, retry_after=42.0, code="ratelimited"))
    gateway, chat = await make_gateway(store, adapter_class=ScriptedPlatform)
    await chat.say("go")
    await gateway.drain()

    assert chat.texts() == ["You said: go"]
    assert 42.0 in waits  # not sooner than the platform asked


async def test_a_question_the_platform_refuses_is_sent_once_as_its_text(store: Store, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    scripted_failures(DeliveryFailed("invalid blocks", permanent=True, code="invalid_blocks"))
    before = counted(metrics.DELIVERED_AS_TEXT)
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["ok"])
    )
    gateway, chat = await make_gateway(store, runner, adapter_class=ScriptedPlatform)
    await chat.say("deploy")
    await gateway.drain()

    assert chat.requests() == []
    assert chat.texts() == ["Which region?"]  # the text fallback, answerable by typing
    assert counted(metrics.DELIVERED_AS_TEXT) == before + 1
    await chat.reply("eu")
    await gateway.drain()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "eu"


async def test_a_refused_reply_is_abandoned_counted_and_logged_with_ids(store: Store, make_gateway, caplog):
    scripted_failures(DeliveryFailed("bot was blocked", permanent=True, code="403"))
    before = counted(metrics.DELIVERIES_GIVEN_UP.labels(platform="test"))
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=["lost", "kept"]))
    gateway, chat = await make_gateway(store, runner, adapter_class=ScriptedPlatform)
    with caplog.at_level(logging.ERROR, logger="clarigate.gateway.flow.delivery"):
        await chat.say("go", event_id="blocked-1")
        await gateway.drain()

    assert chat.texts() == ["kept"]  # the next item still goes out
    assert counted(metrics.DELIVERIES_GIVEN_UP.labels(platform="test")) == before + 1
    (line,) = [r.getMessage() for r in caplog.records if "abandoned" in r.getMessage()]
    assert "test:blocked-1" in line and delivery.delivery_id("test:blocked-1", 0) in line and "403" in line
    assert len(runner.calls) == 1


async def test_a_platform_down_past_the_budget_abandons_and_completes(store: Store, make_gateway, caplog):
    scripted_failures(*[ConnectionError("down")] * 1000)
    before = counted(metrics.DELIVERIES_GIVEN_UP.labels(platform="test"))
    gateway, chat = await make_gateway(store, adapter_class=ScriptedPlatform, delivery_budget_seconds=1.0)
    with caplog.at_level(logging.ERROR, logger="clarigate.gateway.flow.delivery"):
        await chat.say("go", event_id="down-1")
        await gateway.drain(timeout=20)  # completed: the thread is not stuck behind it

    assert chat.texts() == []
    assert counted(metrics.DELIVERIES_GIVEN_UP.labels(platform="test")) == before + 1
    assert any("down-1" in r.getMessage() and "budget" in r.getMessage() for r in caplog.records)
    await chat.say("again", event_id="down-2")  # the same chat thread goes on
    scripted_failures()
    await gateway.drain(timeout=20)
    assert chat.texts() == ["You said: again"]


async def test_a_replica_taking_over_mid_delivery_sends_only_what_was_not_sent(redis_stores, make_gateway):
    """The first replica sent one of two replies and stopped; the second sends the other, no run."""

    class StopsAfterFirst(TestAdapter):
        stop = asyncio.Event()

        async def send(self, conversation, item):
            if isinstance(item, TextReply) and item.text == "two":
                StopsAfterFirst.stop.set()
                await asyncio.Event().wait()  # hangs until the replica is stopped
            return await super().send(conversation, item)

    StopsAfterFirst.stop = asyncio.Event()
    store = redis_stores()
    first_runner = ScriptedRunner(lambda turn: TurnOutput(replies=["one", "two"]))
    first, chat = await make_gateway(store, first_runner, adapter_class=StopsAfterFirst)
    await chat.say("go", event_id="take-1")
    await asyncio.wait_for(StopsAfterFirst.stop.wait(), 10)
    await first.stop(grace=0)  # handed back mid-delivery

    second_runner = ScriptedRunner(lambda turn: TurnOutput(replies=["ran again"]))
    second, other = await make_gateway(redis_stores(store.prefix), second_runner)
    await second.drain(timeout=20, inbound_ids=["test:take-1"])

    assert chat.texts() == ["one"] and other.texts() == ["two"]
    assert second_runner.calls == []  # the agent did not run again


async def test_a_reply_with_half_an_emoji_reaches_the_person_once(store: Store, make_gateway):
    # a model's JSON may hold half a UTF-16 pair ("\ud83d"): no record and no platform takes it;
    # one streamed half by half comes as two halves
    runs: list[str] = []

    def half(turn):
        runs.append(turn.text)
        return TurnOutput(replies=["half \ud83d of an emoji, one in halves: \ud83d" + "\ude00"])

    gateway, chat = await make_gateway(store, ScriptedRunner(half))
    await chat.say("go", event_id="half-1")
    await gateway.drain()

    assert chat.texts() == ["half \ufffd of an emoji, one in halves: 😀"]
    assert len(runs) == 1  # recorded on the first run: the agent is not run again
