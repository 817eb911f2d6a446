"""``/cancel`` withdraws waiting messages (``flow.withdrawals``), never a waiting command: a ``/new``
queued behind a run (it waits its turn, ``Command.in_turn``) still starts a fresh conversation, and
the withdrawal line counts only the messages it withdrew."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.base import Store

from .agent_away import KEPT, STOPPED, Away, quick_retries, until

NEW = "Started a new conversation. What can I do for you?"


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_retries(monkeypatch)


def _held(started: asyncio.Event) -> Any:
    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "a long task":
            started.set()
            await asyncio.sleep(30)
        return TurnOutput(replies=[f"done: {turn.text}"])

    return script


async def test_cancel_stops_the_run_and_a_waiting_new_still_starts_afresh(store: Store, make_gateway):
    started = asyncio.Event()
    gateway, chat = await make_gateway(store, ScriptedRunner(_held(started)))
    await chat.say("a long task")
    await asyncio.wait_for(started.wait(), 5)
    key = chat.conversation().thread_key
    before = await store.thread_of_chat(key)
    await chat.say("/new")  # waits its turn behind the run

    await chat.say("/cancel")
    await asyncio.wait_for(gateway.drain(timeout=20), 30)

    assert chat.texts() == [STOPPED, NEW]
    assert await store.thread_of_chat(key) != before


async def test_a_new_waiting_behind_someone_elses_run_is_not_withdrawn(store: Store, make_gateway):
    started = asyncio.Event()
    gateway, chat = await make_gateway(store, ScriptedRunner(_held(started)))
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("a long task", user="ann", **room)
    await asyncio.wait_for(started.wait(), 5)
    await chat.say("/new", user="bob", **room)  # waits behind Ann's run

    await chat.say("/cancel", user="bob", **room)  # not his run: and his /new is no message
    await until(lambda: chat.texts("room"))
    assert not any("Withdrawn" in text for text in chat.texts("room"))
    await chat.say("/cancel", user="ann", **room)  # her run stops: Bob's /new has its turn
    await asyncio.wait_for(gateway.drain(timeout=20), 30)

    assert chat.texts("room")[-2:] == [STOPPED, NEW]


async def test_a_new_after_a_kept_message_is_neither_withdrawn_nor_counted(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner(Away(2.0)), stale_claim_seconds=1.5)
    await chat.say("deploy the fix")
    await until(lambda: KEPT in chat.texts())
    await chat.say("/new")  # waits behind the kept message
    await asyncio.sleep(0.2)

    await chat.say("/cancel")
    await asyncio.wait_for(gateway.drain(timeout=30), 40)

    withdrawn = "✖ Withdrawn: your waiting message “deploy the fix” will not be answered."
    assert chat.texts() == [KEPT, withdrawn, NEW]  # not "your 2 waiting messages"


async def test_a_new_carrying_a_request_is_withdrawn_with_it(store: Store, make_gateway):
    """``/new drop the prod tables`` waiting its turn carries a request: ``/cancel`` withdraws it
    whole, and "drop the prod tables" never runs."""
    away = Away(2.0)
    gateway, chat = await make_gateway(store, ScriptedRunner(away), stale_claim_seconds=1.5)
    await chat.say("deploy the fix")
    await until(lambda: KEPT in chat.texts())
    await chat.say("/new drop the prod tables")
    await asyncio.sleep(0.2)

    await chat.say("/cancel")
    await asyncio.wait_for(gateway.drain(timeout=30), 40)

    assert chat.texts() == [KEPT, "✖ Withdrawn: your 2 waiting messages will not be answered."]
    assert away.ran == []
