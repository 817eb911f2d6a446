"""When delivery or the store fails: the job or the click is retried, and nothing is lost or doubled."""

from __future__ import annotations

import asyncio

import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerStatus
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.memory import MemoryStore


class FlakyPlatform(TestAdapter):
    """A platform whose API rejects the first ``failures`` replies."""

    failures = 1

    async def send(self, conversation, item):
        if isinstance(item, TextReply) and self.failures > 0:
            type(self).failures -= 1
            raise ConnectionError("platform API unavailable")
        return await super().send(conversation, item)


async def test_a_reply_that_could_not_be_sent_is_retried_and_arrives_once(store: Store, make_gateway):
    FlakyPlatform.failures = 1
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=FlakyPlatform)

    await chat.say("status?")
    await gateway.drain()

    assert chat.texts() == ["You said: status?"]
    assert len(runner.calls) == 1  # only the delivery was retried, not the turn


async def test_a_platform_failing_past_the_old_give_up_still_gets_every_reply_once(
    store: Store, make_gateway
):
    FlakyPlatform.failures = 6  # three deliveries used to be the end of it
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=FlakyPlatform)

    await chat.say("one", chat="a")
    await chat.say("two", chat="b")
    await gateway.drain(timeout=60)

    assert sorted(chat.texts()) == ["You said: one", "You said: two"]
    assert len(runner.calls) == 2


async def test_when_the_run_fails_before_its_reply_is_recorded_the_event_may_be_delivered_again(
    store: Store, make_gateway
):
    real_record = store.record_delivery
    failures = [ConnectionError("store unreachable")] * 3

    async def flaky_record(*args, **kwargs):
        if failures:
            raise failures.pop()
        return await real_record(*args, **kwargs)

    store.record_delivery = flaky_record  # type: ignore[method-assign]
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    assert await chat.say("status?", event_id="E7") is AcceptOutcome.ACCEPTED
    await gateway.drain()
    assert chat.texts() == [] and len(runner.calls) == 3

    # the platform redelivers the event later: it is processed again instead of dropped as a duplicate
    assert await chat.say("status?", event_id="E7") is AcceptOutcome.ACCEPTED
    for _ in range(300):  # drain cannot tell this run from the given-up one (same inbound id): poll
        if chat.texts():
            break
        await asyncio.sleep(0.01)
    assert chat.texts() == ["You said: status?"]


class ClaimFailsOnce(MemoryStore):
    """A store that loses its connection during the first claim."""

    failed = False

    async def claim_answer(self, *args, **kwargs):
        if not self.failed:
            self.failed = True
            raise ConnectionError("store unreachable")
        return await super().claim_answer(*args, **kwargs)


async def test_a_click_that_failed_in_the_store_counts_when_the_platform_retries_it(make_gateway):
    question = choice_request("Ship it?", ["yes", "no"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["shipped"])
    )
    gateway, chat = await make_gateway(ClaimFailsOnce("t"), runner)
    await chat.say("release")
    await gateway.drain()

    with pytest.raises(ConnectionError):  # the adapter answers the platform with an error: it retries
        await chat.click(0, event_id="click-1")
    retried = await chat.click(0, event_id="click-1")
    await gateway.drain()

    assert retried.status is AnswerStatus.ACCEPTED
    assert chat.texts() == ["shipped"]


async def test_a_reply_whose_completion_hit_a_store_blip_is_not_sent_again(store: Store, make_gateway):
    real_complete = store.complete_job
    failures = [ConnectionError("store unreachable")] * 2

    async def flaky_complete(job):
        if failures:
            raise failures.pop()
        return await real_complete(job)

    store.complete_job = flaky_complete  # type: ignore[method-assign]
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("status?")
    await gateway.drain()

    assert chat.texts() == ["You said: status?"]
    assert len(runner.calls) == 1


async def test_a_completion_failing_past_the_stale_claim_time_is_not_sent_again(store: Store, make_gateway):
    real_complete = store.complete_job
    loop = asyncio.get_running_loop()
    down_until = loop.time() + 4 * 0.3  # four stale-claim times (config_for_tests)

    async def complete_after_outage(job):
        if loop.time() < down_until:
            raise ConnectionError("store unreachable")
        return await real_complete(job)

    store.complete_job = complete_after_outage  # type: ignore[method-assign]
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("status?", event_id="ev-outage")
    await gateway.drain()
    await asyncio.sleep(3 * 0.3)  # a stale claim would have taken the job and sent it again by now

    assert chat.texts() == ["You said: status?"]  # sent once
    assert len(runner.calls) == 1
    assert await store.is_done("test:ev-outage")  # completed once the store was back


class NamingFails(TestAdapter):
    """A platform whose after-the-ack completion of a message or an answer's sender (names) raises."""

    async def complete_message(self, message):
        raise ConnectionError("contact API unreachable")

    async def complete_sender(self, sender):
        raise ConnectionError("contact API unreachable")


async def test_a_message_whose_completion_fails_runs_as_it_came(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=NamingFails)
    await chat.say("ask @U0ALICE")
    await gateway.drain()
    assert [c.text for c in runner.calls] == ["ask @U0ALICE"]
    assert chat.texts() == ["You said: ask @U0ALICE"]


async def test_an_answer_whose_senders_naming_fails_resumes_with_their_id(store: Store, make_gateway):
    question = choice_request("Ship it?", ["yes", "no"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["shipped"])
    )
    gateway, chat = await make_gateway(store, runner, adapter_class=NamingFails)
    await chat.say("release")
    await gateway.drain()
    assert (await chat.click(0)).status is AnswerStatus.ACCEPTED
    await gateway.drain()
    assert chat.texts() == ["shipped"]
    asked, resumed = (c.speaker for c in runner.calls)
    assert asked is not None and resumed is not None
    assert resumed["sender"]["user_id"] == asked["sender"]["user_id"]  # the id stands for the name
