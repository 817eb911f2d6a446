"""A person recalls (撤回) a message the bot has not run yet: it is never run, later ones are."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .cards import text_of
from .events import envelope, message_event


def recalled(message_id: str, chat: str = "oc_p2p") -> dict[str, Any]:
    """An ``im.message.recalled_v1`` event, as Feishu documents it."""
    event = {
        "message_id": message_id,
        "chat_id": chat,
        "recall_time": str(int(time.time() * 1000)),
        "recall_type": "message_owner",
    }
    return envelope("im.message.recalled_v1", event)


def slow_then_done(busy: asyncio.Event) -> ScriptedRunner:
    async def script(turn: Turn) -> TurnOutput:
        if turn.text == "long report":
            await busy.wait()  # the thread's run is slow: the next message waits for its turn
        return TurnOutput(replies=[f"Done: {turn.text}"])

    return ScriptedRunner(script)


async def test_a_message_recalled_while_it_waits_for_its_turn_is_never_run(make_bot):
    busy = asyncio.Event()
    bot = await make_bot(slow_then_done(busy), progress_after_seconds=100)
    await bot.deliver(message_event("long report"))
    for _ in range(100):
        if bot.runner.calls:
            break
        await asyncio.sleep(0.02)
    await bot.deliver(message_event("wrong chat, sorry", message_id="om_oops"))
    answered = await bot.deliver(recalled("om_oops"))
    assert answered.status_code == 200
    await bot.deliver(message_event("and the summary"))
    busy.set()
    await bot.gateway.drain()

    assert [call.text for call in bot.runner.calls] == ["long report", "and the summary"]
    shown = [text_of(card) for card in bot.api.shown()]
    assert any("Done: and the summary" in text for text in shown), shown
    assert not any("wrong chat" in text for text in shown), shown


async def test_recalling_a_message_answered_already_changes_nothing(make_bot):
    bot = await make_bot(slow_then_done(asyncio.Event()), progress_after_seconds=100)
    await bot.deliver(message_event("first", message_id="om_first"))
    await bot.gateway.drain()
    calls = len(bot.api.posted())
    assert (await bot.deliver(recalled("om_first"))).status_code == 200
    await bot.gateway.drain()
    assert len(bot.api.posted()) == calls  # nothing recalled, edited or posted
    await bot.deliver(message_event("second"))
    await bot.gateway.drain()
    assert [call.text for call in bot.runner.calls] == ["first", "second"]
    assert any("Done: second" in text_of(card) for card in bot.api.shown())
