"""Slack Connect: a run streams to the person it answers in their own team.

``chat.startStream`` names the person the stream is for outside DMs, ``recipient_team_id`` being
"the encoded ID of the team the user receiving the streaming text belongs to". In a Slack Connect
channel that may be another organization's workspace: Slack says so in the event (``user_team``;
``team`` is the workspace the event came from) and in a click's ``user.team_id``.
"""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.gateway.boundary.messages import Sender

from .conftest import MakeWorld
from .fake_slack import TEAM_ID

OTHER_TEAM = "T0OTHER"


def recipients(world) -> list[tuple[str, str]]:
    return [(s["recipient_team_id"], s["recipient_user_id"]) for s in world.fake.of("chat.startStream")]


async def test_a_mention_from_another_workspace_streams_to_the_person_in_their_team(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    await world.user.mention("hello from afar", user="U0EXT", team=TEAM_ID, user_team=OTHER_TEAM)
    await world.user.mention("hello from here", user="U0LOCAL", team=TEAM_ID, user_team=TEAM_ID)
    await world.user.mention("hello, no team named", user="U0PLAIN")
    await world.settle()

    assert sorted(recipients(world)) == sorted(
        [(OTHER_TEAM, "U0EXT"), (TEAM_ID, "U0LOCAL"), (TEAM_ID, "U0PLAIN")]
    )
    assert not any(m["streaming"] for m in world.fake.shown())  # every stream became its reply


async def test_a_click_from_another_workspace_streams_the_answer_run_to_them(make_world: MakeWorld):
    def script(turn: Turn):
        if turn.response is None:
            return asking(choice_request("Which framework?", ["React", "Vue"]))
        return ScriptedRunner().script(turn)

    world = await make_world(ScriptedRunner(script))
    await world.user.mention("build a site", user="U0EXT", team=TEAM_ID, user_team=OTHER_TEAM)
    await world.settle()
    question = world.fake.posted()
    streams_before = len(world.fake.of("chat.startStream"))

    click = world.user.click_payload(question, "clarigate:o2", user="U0EXT")
    click["user"]["team_id"] = OTHER_TEAM  # block_actions: the clicker's own team
    await world.user.interact(click)
    await world.settle()

    answer_streams = recipients(world)[streams_before:]
    assert answer_streams == [(OTHER_TEAM, "U0EXT")]


def test_a_sender_kept_before_teams_were_kept_reads_back_as_the_workspaces():
    kept = Sender.model_validate_json('{"user_id": "U1", "display_name": "Ada"}')  # a job queued earlier
    assert kept == Sender(user_id="U1", display_name="Ada") and kept.team is None
    assert kept.model_dump_json() == '{"user_id":"U1","display_name":"Ada"}'  # and is kept as it was
    theirs = Sender(user_id="U0EXT", team=OTHER_TEAM)
    assert Sender.model_validate_json(theirs.model_dump_json()) == theirs
