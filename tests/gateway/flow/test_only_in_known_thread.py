"""A message kept before its thread could be looked up (``only_in_known_thread``: a plain reply in
a group's thread, kept at the platform's last delivery while the store was unreachable) counts only
where the bot takes part: its job runs in a thread that has an agent thread, or one the adapter's
own record knows; anywhere else it is dropped without a word (no run, nothing sent: neither the
refusal a stranger gets nor the "your message is kept" notice of a store outage)."""

from __future__ import annotations

import asyncio
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.agent.protocol import catalog
from clarigate.gateway.boundary.messages import AcceptOutcome, InboundMessage, Sender
from clarigate.gateway.store.base import Store

from ...conftest import RedisStoreFactory
from ..jobs.crash import eventually
from ..tcp_proxy import OutageProxy


class Knowing(TestAdapter):
    """The in-memory platform (under Slack's name, for its allow-lists) with a record of its own
    of the threads the bot takes part in, as Slack's bare mentions leave one."""

    platform = "slack"

    def __init__(self, gateway: Any) -> None:
        super().__init__(gateway)
        self.known: set[str] = set()
        self.asked: list[str] = []  # event ids ``known_thread`` was asked about

    async def known_thread(self, message: InboundMessage) -> bool:
        self.asked.append(message.event_id)
        return message.conversation.thread_key in self.known


def kept_reply(chat: TestAdapter, text: str, topic: str, user: str = "u1") -> InboundMessage:
    """A plain reply in thread ``topic`` of the group ``general``, kept before it could be looked up."""
    return InboundMessage(
        conversation=chat.conversation("general", topic, direct=False),
        sender=Sender(user_id=user),
        text=text,
        event_id=f"kept-{topic}-{text}",
        last_delivery=True,
        only_in_known_thread=True,
    )


async def test_in_a_thread_with_an_agent_thread_it_runs_as_usual(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=Knowing)
    await chat.say("start", chat="general", topic="t1", direct=False)
    await gateway.drain()

    assert await gateway.accept(kept_reply(chat, "and then?", "t1")) is AcceptOutcome.ACCEPTED
    await gateway.drain()

    assert [c.text for c in runner.calls] == ["start", "and then?"]
    assert chat.texts() == ["You said: start", "You said: and then?"]
    assert chat.asked == []  # the agent thread says it


async def test_in_a_thread_the_adapter_knows_it_runs_as_usual(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=Knowing)
    message = kept_reply(chat, "hello", "t2")
    chat.known.add(message.conversation.thread_key)  # called in, with no agent thread yet

    await gateway.accept(message)
    await gateway.drain()

    assert [c.text for c in runner.calls] == ["hello"]
    assert chat.texts() == ["You said: hello"]
    assert chat.asked == [message.event_id]


async def test_anywhere_else_it_is_dropped_without_a_word(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, adapter_class=Knowing)
    message = kept_reply(chat, "lunch?", "t3")

    assert await gateway.accept(message) is AcceptOutcome.ACCEPTED
    await gateway.drain()  # the job is done: taken and dropped

    assert runner.calls == [] and chat.sent == []
    assert chat.asked == [message.event_id]
    assert not await gateway.knows_conversation(message.conversation)


async def test_a_stranger_gets_no_refusal_in_a_thread_that_may_not_be_the_bots(store: Store, make_gateway):
    runner = ScriptedRunner()
    only_the_boss = {"allowed_users": ["boss"]}
    gateway, chat = await make_gateway(store, runner, adapter_class=Knowing, slack=only_the_boss)

    outcome = await gateway.accept(kept_reply(chat, "hi", "t4", user="stranger"))
    await gateway.drain()

    assert outcome is AcceptOutcome.REFUSED
    assert runner.calls == [] and chat.sent == []


async def test_a_store_outage_while_its_thread_is_looked_up_says_nothing_there(
    redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, make_gateway
):
    """The store goes away again while the job looks the thread up, longer than the few seconds
    after which a job's person is told their message is kept: not told, in a thread not the bot's."""

    restored: list[asyncio.Task[None]] = []

    async def back_in(seconds: float) -> None:
        await asyncio.sleep(seconds)
        await redis_proxy.restore()

    class Flapping(Knowing):
        async def known_thread(self, message: InboundMessage) -> bool:
            if not self.asked:  # the first look: the store goes away for 7 s
                self.asked.append(message.event_id)
                await redis_proxy.cut()
                restored.append(asyncio.create_task(back_in(7.0)))
                await self.gateway.state.get_json("anything")  # raises: unreachable
            return await super().known_thread(message)

    runner = ScriptedRunner()
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    gateway, chat = await make_gateway(store, runner, adapter_class=Flapping, stale_claim_seconds=30.0)
    await gateway.accept(kept_reply(chat, "lunch?", "t5"))
    await eventually(lambda: len(chat.asked) == 2, within=30)  # looked up again once the store answers
    await gateway.drain(timeout=30)

    assert runner.calls == [] and chat.sent == []
    assert catalog.text("store_unavailable", "en") not in chat.texts()
