"""A member who leaves a Slack channel: the question only they could answer closes, as Cancel would."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld
from .fake_slack_people import TEAM_ID
from .test_threads_and_people import asks_on_build


def member_left(user: str, channel: str = "C1") -> dict[str, Any]:
    """A ``member_left_channel`` event, as Slack documents it."""
    return {
        "type": "member_left_channel",
        "user": user,
        "channel": channel,
        "channel_type": "C",
        "team": TEAM_ID,
    }


async def test_the_asker_leaving_the_channel_closes_their_question_and_the_thread_goes_on(
    make_world: MakeWorld,
):
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()
    assert (await world.user.event(member_left("U3"))).status_code == 200  # someone else
    assert (await world.user.event(member_left("U1", channel="C2"))).status_code == 200  # elsewhere
    await world.settle()
    assert world.fake.edits(question["ts"]) == [] and len(runner.calls) == 1

    assert (await world.user.event(member_left("U1"))).status_code == 200
    await world.settle()
    assert world.fake.edits(question["ts"])  # shown closed, as a Cancel shows it
    told = runner.calls[-1].response
    assert told is not None and told.response_kind == "declined" and told.reason == "cancelled"

    await world.user.mention("summarize the incident", user="U2", thread_ts=ts)  # the thread goes on
    await world.settle()
    ran = runner.calls[-1]
    assert ran.response is None and ran.text.endswith("summarize the incident")
    assert "stays open" not in ran.text
