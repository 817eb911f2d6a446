"""'Working…' shows only once a run outlasts ``progress_after_seconds``, and never stays behind."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import Outbound, ProgressUpdate
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore


def sequence(chat: TestAdapter) -> list[tuple[str, str | None]]:
    return [(item.kind, getattr(item, "state", None)) for _, item in chat.sent]


def slow(seconds: float, reply: str = "done") -> ScriptedRunner:
    async def script(turn):
        await asyncio.sleep(seconds)
        return TurnOutput(replies=[reply])

    return ScriptedRunner(script)


async def test_a_quick_reply_comes_without_any_working_indicator_by_default(make_gateway):
    assert GatewayConfig().progress_after_seconds == 1.0  # what an operator gets unless they set it
    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(), progress_after_seconds=1.0)
    await chat.say("hello")
    await gateway.drain()
    await asyncio.sleep(1.2)  # a timer left armed would show "working…" now
    assert sequence(chat) == [("text", None)]


async def test_a_run_outlasting_the_delay_shows_working_then_clears_it_before_the_reply(make_gateway):
    gateway, chat = await make_gateway(MemoryStore("t"), slow(0.3), progress_after_seconds=0.05)
    await chat.say("take your time")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("text", None)]
    started, done = chat.sent[0][1], chat.sent[1][1]
    assert isinstance(started, ProgressUpdate) and isinstance(done, ProgressUpdate)
    assert done.ref is not None and done.ref == chat.refs[0]  # the shown message is the one cleared


class SlowToShowAdapter(TestAdapter):
    """Its "working…" message takes a while to post (a slow platform API)."""

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        if isinstance(item, ProgressUpdate) and item.state == "started":
            await asyncio.sleep(0.3)
        return await super().send(conversation, item)


async def test_a_run_ending_while_working_is_being_posted_still_clears_it(make_gateway):
    gateway, chat = await make_gateway(
        MemoryStore("t"), slow(0.1), progress_after_seconds=0.02, adapter_class=SlowToShowAdapter
    )
    await chat.say("quick-ish")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("text", None)]
    done = chat.sent[1][1]
    assert isinstance(done, ProgressUpdate) and done.ref == chat.refs[0]


async def test_a_failed_long_run_clears_working_and_says_so(make_gateway):
    async def failing(turn):
        await asyncio.sleep(0.2)
        raise RuntimeError("model down")

    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(failing), progress_after_seconds=0.05)
    await chat.say("try")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("error", None)]
