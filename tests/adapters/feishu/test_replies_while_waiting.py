"""A reply in the thread of a mention that still waits for its run (every run busy) is the bot's:
the mention's accepted job makes the thread the bot's before its run makes the agent thread."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .cards import text_of
from .events import message_event
from .test_scenarios import agent

GROUP = {"chat": "oc_group", "chat_type": "group"}


async def test_a_reply_in_a_thread_whose_first_message_still_waits_is_not_dropped(make_bot):
    busy = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text.startswith("long"):
            await busy.wait()  # the replica's runs are all taken for a while
        return agent(turn)

    bot = await make_bot(ScriptedRunner(script))  # two workers
    for n in (1, 2):
        long = message_event(f"long report {n}", "ou_carol", f"oc_other{n}", "group", mention_bot=True)
        await bot.deliver(long)
    for _ in range(100):
        if len(bot.runner.calls) == 2:
            break
        await asyncio.sleep(0.02)
    first = message_event(
        "summarize the incident", "ou_alice", message_id="om_root", mention_bot=True, **GROUP
    )
    await bot.deliver(first)
    await bot.deliver(message_event("the one from last night", "ou_alice", root_id="om_root", **GROUP))
    busy.set()
    await bot.gateway.drain()

    assert [c.text for c in bot.runner.calls][2:] == ["summarize the incident", "the one from last night"]
    shown = [text_of(card) for card in bot.api.shown()]
    assert sum("You said: the one from last night" in text for text in shown) == 1, shown
    assert sum("om_root/reply" in call.path for call in bot.api.posted()) == 2  # both in its thread
