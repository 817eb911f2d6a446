"""When delivery fails before any reply: the job is retried, then given up with its dedupe key released."""

from __future__ import annotations

import asyncio

from gateway.messages import AcceptOutcome, TextReply
from gateway.store.base import Store
from gateway.testing import ScriptedRunner, TestAdapter


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
    assert len(runner.calls) == 2  # the turn ran again on the retry


async def test_after_the_last_retry_the_event_may_be_delivered_again(store: Store, make_gateway):
    FlakyPlatform.failures = 3
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=FlakyPlatform)

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
