"""``/cancel`` of a question: its reply ("✖ Cancelled the question …") is shown before anything the
follow-up run that tells the agent says (a graph refusing the declined answer: "the task stopped"),
however slowly the platform takes that reply."""

from __future__ import annotations

import asyncio
import time

import pytest

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import Outbound, TextReply
from clarigate.gateway.flow import closing
from clarigate.gateway.store.base import Store

from .test_dismissing import STOPPED, graph_interrupt

CANCELLED = "✖ Cancelled the question “Book the trip?”"


class SlowToConfirm(TestAdapter):
    """A platform that takes its time over the ``/cancel`` reply (a slow API call, a retry)."""

    async def send(self, conversation: Conversation, item: Outbound):  # type: ignore[no-untyped-def]
        if isinstance(item, TextReply) and item.text == CANCELLED:
            await asyncio.sleep(0.3)
        return await super().send(conversation, item)


async def test_the_cancel_reply_comes_before_what_the_follow_up_run_says(store: Store, make_gateway):
    gateway, chat = await make_gateway(
        store, ScriptedRunner(graph_interrupt(refuses=True)), adapter_class=SlowToConfirm
    )
    await chat.say("book a trip")
    await gateway.drain()

    await chat.say("/cancel")
    await gateway.drain()

    assert chat.texts() == [CANCELLED, STOPPED["en"]]


async def test_a_cancel_reply_never_delivered_holds_its_follow_up_run_only_a_while(
    store: Store, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setattr(closing, "REPLY_WAIT", 0.2)  # the /cancel's worker died: its job never completes
    started = time.monotonic()
    await closing.after_reply(store, "test:never-done")
    assert 0.2 <= time.monotonic() - started < 1.0
    await closing.after_reply(store, None)  # any other answer's run: not held at all
