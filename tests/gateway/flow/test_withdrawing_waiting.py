"""``/cancel`` with no question open and no run of the person's withdraws their waiting messages
(``flow.withdrawals``): one kept while the agent is away, or waiting behind someone else's run.
Never another member's message, never one sent after the ``/cancel``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.base import Store

from .agent_away import KEPT, STOPPED, Away, quick_retries, until


def withdrawn(text: str) -> str:
    return f"✖ Withdrawn: your waiting message “{text}” will not be answered."


@pytest.fixture(autouse=True)
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    quick_retries(monkeypatch)


async def test_a_message_kept_while_the_agent_is_away_is_withdrawn_by_cancel(store: Store, make_gateway):
    away = Away(2.0)
    runner = ScriptedRunner(away)
    # tried again once the stale-claim time passed: the kept message waits, no run of it going on
    gateway, chat = await make_gateway(store, runner, stale_claim_seconds=1.5)
    await chat.say("deploy the fix")
    await until(lambda: KEPT in chat.texts())
    await asyncio.sleep(0.2)  # handed back: waiting for its next try

    await chat.say("/cancel")
    await until(lambda: len(chat.texts()) > 1)
    away.until = 0.0  # the agent is back
    await chat.say("and now this")  # after the /cancel: not withdrawn
    await asyncio.wait_for(gateway.drain(timeout=30), 40)

    assert chat.texts() == [KEPT, withdrawn("deploy the fix"), "You said: and now this"]
    assert "You said: deploy the fix" not in chat.texts()


async def test_a_message_waiting_behind_someone_elses_run_is_withdrawn_not_theirs(store: Store, make_gateway):
    started = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "a long task":
            started.set()
            await asyncio.sleep(30)
        return TurnOutput(replies=[f"done: {turn.text}"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("a long task", user="ann", **room)
    await asyncio.wait_for(started.wait(), 5)
    await chat.say("bob's question", user="bob", **room)
    await chat.say("ann's follow-up", user="ann", **room)

    await chat.say("/cancel", user="bob", **room)  # Ann's run is not his: his waiting message goes
    await until(lambda: chat.texts("room"))
    assert chat.texts("room") == [withdrawn("bob's question")]

    await chat.say("/cancel", user="ann", **room)  # her run stops; her waiting message still runs
    await asyncio.wait_for(gateway.drain(), 10)
    assert chat.texts("room")[1:] == [STOPPED, "done: ann's follow-up"]


async def test_several_kept_messages_are_withdrawn_in_one_line(store: Store, make_gateway):
    runner = ScriptedRunner(Away(2.0))
    gateway, chat = await make_gateway(store, runner, stale_claim_seconds=1.5)
    await chat.say("first")
    await until(lambda: KEPT in chat.texts())
    await chat.say("second")  # waits behind the kept one
    await asyncio.sleep(0.2)

    await chat.say("/cancel")
    await asyncio.wait_for(gateway.drain(timeout=30), 40)

    assert chat.texts() == [KEPT, "✖ Withdrawn: your 2 waiting messages will not be answered."]


async def test_nothing_is_withdrawn_when_the_stop_could_not_be_sent(
    store: Store, make_gateway, monkeypatch: pytest.MonkeyPatch
):
    """The stop channel unreachable (Redis trouble, a user without Pub/Sub): the message may be
    running in another process, so it is not reported withdrawn (it would be answered anyway)."""

    async def refused(message: dict[str, Any]) -> int:
        raise ConnectionError("no Pub/Sub for this user")

    monkeypatch.setattr(store, "publish_stop", refused)
    away = Away(2.0)
    gateway, chat = await make_gateway(store, ScriptedRunner(away), stale_claim_seconds=1.5)
    await chat.say("deploy the fix")
    await until(lambda: KEPT in chat.texts())
    await asyncio.sleep(0.2)

    await chat.say("/cancel")
    await until(lambda: len(chat.texts()) > 1)
    away.until = 0.0
    await asyncio.wait_for(gateway.drain(timeout=30), 40)

    assert chat.texts()[1].startswith("There is no open question to cancel.")
    assert chat.texts()[-1] == "You said: deploy the fix"
