"""A reply in the thread of a mention that still waits for its run (every run busy) is the bot's:
the mention's accepted job makes the thread the bot's before its run makes the agent thread."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld


async def test_a_reply_in_a_thread_whose_first_message_still_waits_is_not_dropped(make_world: MakeWorld):
    busy = asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        if turn.text.startswith("long"):
            await busy.wait()  # the replica's runs are all taken for a while
        return ScriptedRunner().script(turn)

    runner = ScriptedRunner(script)
    world = await make_world(runner)  # two workers
    await world.user.mention("long report one", user="U7", channel="C9")
    await world.user.mention("long report two", user="U8", channel="C9")
    for _ in range(100):
        if len(runner.calls) == 2:
            break
        await asyncio.sleep(0.02)
    _, ts = await world.user.mention("deploy the site", user="U1")
    await world.user.channel_message("staging first, please", user="U1", thread_ts=ts)  # no mention
    busy.set()
    await world.settle()

    assert [c.text for c in runner.calls][2:] == ["deploy the site", "staging first, please"]
    replies = [m.get("text") for m in world.fake.shown() if m.get("thread_ts") == ts]
    assert replies == ["You said: deploy the site", "You said: staging first, please"]


async def test_a_plain_message_in_a_thread_the_bot_was_never_called_to_is_still_not_its(
    make_world: MakeWorld,
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.mention("hello", user="U1")
    await world.user.channel_message("lunch?", user="U2", thread_ts="1700000000.000100")  # another thread
    await world.settle()
    assert [c.text for c in runner.calls] == ["hello"]
