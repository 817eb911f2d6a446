"""A person deletes a message the bot has not run yet: it is never run, later ones are."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .slack_user import next_ts


def deleted(channel: str, ts: str, text: str) -> dict[str, Any]:
    """A ``message`` event of subtype ``message_deleted``, as Slack documents it."""
    return {
        "type": "message",
        "subtype": "message_deleted",
        "hidden": True,
        "channel": channel,
        "channel_type": "im",
        "ts": next_ts(),
        "deleted_ts": ts,
        "event_ts": next_ts(),
        "previous_message": {"type": "message", "user": "U1", "text": text, "ts": ts},
    }


def slow_then_done(busy: asyncio.Event) -> ScriptedRunner:
    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "long report":
            await busy.wait()  # the thread's run is slow: the next message waits for its turn
        return TurnOutput(replies=[f"Done: {turn.text}"])

    return ScriptedRunner(script)


def said(world: Any) -> str:
    """Everything the bot posted or edited into the chat."""
    return json.dumps([world.fake.of(m) for m in ("chat.postMessage", "chat.update")], ensure_ascii=False)


async def test_a_message_deleted_while_it_waits_for_its_turn_is_never_run(make_world):
    busy = asyncio.Event()
    world = await make_world(slow_then_done(busy), progress_after_seconds=100)
    await world.user.dm("long report")
    for _ in range(100):
        if world.runner.calls:
            break
        await asyncio.sleep(0.02)
    _, oops = await world.user.dm("wrong channel, sorry")
    answered = await world.user.event(deleted("D1", oops, "wrong channel, sorry"))
    assert answered.status_code == 200
    await world.user.dm("and the summary")
    busy.set()
    await world.settle()

    assert [call.text for call in world.runner.calls] == ["long report", "and the summary"]
    assert "Done: and the summary" in said(world)
    assert "wrong channel" not in said(world)


async def test_deleting_a_message_answered_already_changes_nothing(make_world):
    world = await make_world(slow_then_done(asyncio.Event()), progress_after_seconds=100)
    _, first = await world.user.dm("first")
    await world.settle()
    before = said(world)
    assert (await world.user.event(deleted("D1", first, "first"))).status_code == 200
    await world.settle()
    assert said(world) == before  # nothing posted or edited
    await world.user.dm("second")
    await world.settle()
    assert [call.text for call in world.runner.calls] == ["first", "second"]
    assert "Done: second" in said(world)


def test_the_bots_own_deleted_message_is_no_recall():
    """The bot deletes its own progress and live messages: Slack reports those deletions too."""
    from clarigate.adapters.slack.edits import deleted_event_id

    event = {
        "type": "message",
        "subtype": "message_deleted",
        "hidden": True,
        "channel": "C1",
        "ts": "1700000001.000200",
        "deleted_ts": "1700000000.000100",
        "previous_message": {
            "type": "message",
            "bot_id": "B0BOT",
            "text": "⏳ Working…",
            "ts": "1700000000.000100",
        },
    }
    assert deleted_event_id(event) is None
    person = {**event, "previous_message": {"type": "message", "user": "U1", "text": "hi", "ts": "1.2"}}
    assert deleted_event_id(person) == "C1:1700000000.000100"
