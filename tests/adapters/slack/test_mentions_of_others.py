"""A reply in a channel thread the bot takes part in that mentions other people but not the bot is
said to them (people, everyone here, a user group): it does not run, and the open question stays
open. A plain reply there is still the bot's (how people answer and follow up)."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld
from .test_threads_and_people import asks_on_build


async def test_a_thread_reply_to_another_member_is_not_for_the_bot(make_world: MakeWorld):
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.channel_message("<@U3> what do you think, React or Vue?", user="U2", thread_ts=ts)
    await world.user.channel_message("<@U3|carol> React, I'd say", user="U1", thread_ts=ts)
    await world.settle()
    assert len(runner.calls) == 1  # said to U3, not to the bot
    assert world.fake.edits(question["ts"]) == []  # the question is still open

    await world.user.channel_message("2", user="U1", thread_ts=ts)  # no mention: the bot's
    await world.settle()
    assert [c.response.value for c in runner.calls if c.response] == ["Vue"]


@pytest.mark.parametrize(
    "call",
    ["<!here>", "<!here|here>", "<!channel>", "<!everyone>", "<!subteam^S0123|@oncall>", "<!subteam^S0123>"],
)
async def test_a_thread_reply_to_everyone_here_or_a_user_group_is_not_for_the_bot(
    make_world: MakeWorld, call: str
):
    # Slack's text of a rich text ``broadcast`` (here, channel, everyone) or ``usergroup`` element
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.channel_message(
        f"{call} does anyone know where the runbook is?", user="U2", thread_ts=ts
    )
    await world.settle()
    assert [c.text for c in runner.calls] == ["build"]  # said to the others, not to the bot
    assert world.fake.edits(question["ts"]) == []  # the question is still open
    assert len(world.fake.of("chat.postMessage")) == 1  # the question alone: no reply to them
