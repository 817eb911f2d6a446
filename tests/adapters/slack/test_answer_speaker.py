"""Who is talking when a click or a form answers: Slack's ``block_actions`` and ``view_submission``
payloads carry the person's user id only, yet the run the answer resumes names them as their
messages' runs do (``users.info``, asked where the answer's job runs and kept an hour, never on the
ack path). The real slack-bolt adapter against the fake Slack, the real core."""

from __future__ import annotations

import asyncio

from clarigate.adapters.slack.render import OTHER_ACTION
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .conftest import MakeWorld, SlackWorld


def asks_then_echoes(turn: Turn) -> TurnOutput:
    """Ask which framework, and answer whatever resumes it."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=[f"Going with {turn.response.value}."])


def speaker_names(world: SlackWorld) -> list[tuple[str, str | None]]:
    """Who each run was told is talking: (user id, display name)."""
    return [(c.speaker["sender"]["user_id"], c.speaker["sender"]["display_name"]) for c in world.runner.calls]


async def test_a_click_resumes_the_run_with_the_name_the_persons_message_had(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(asks_then_echoes))
    world.fake.add_user("U7", display_name="Ada", real_name="Ada Lovelace")
    await world.user.dm("set up a web app", user="U7")
    await world.settle()

    await world.user.click(world.fake.posted(), "clarigate:o2", user="U7")  # block_actions: user.id only
    await world.settle()

    assert world.fake.last_shown()["text"] == "Going with Vue."
    assert speaker_names(world) == [("U7", "Ada"), ("U7", "Ada")]
    assert world.fake.people_asked() == ["U7"]  # the answer is named from the message's lookup


async def test_an_other_box_submitted_by_someone_else_names_them(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(asks_then_echoes), answer_policy="anyone")
    world.fake.add_user("U7", display_name="Ada")
    world.fake.add_user("U8", real_name="Bob Builder")  # no display name: the real name stands in
    _, top = await world.user.mention("set up a web app", user="U7", channel="C1")
    await world.settle()
    question = world.fake.posted()

    await world.user.click(question, OTHER_ACTION, user="U8")
    await world.adapter.idle()  # the modal opens beside the ack
    modal = world.fake.of("views.open")[-1]["view"]
    typed = {"answer": {"value": {"type": "plain_text_input", "value": "Svelte"}}}
    response = await world.user.submit(modal, typed, user="U8")  # view_submission: user.id only
    assert response.status_code == 200
    await world.settle()

    assert world.fake.last_shown()["text"] == "Going with Svelte."
    assert speaker_names(world) == [("U7", "Ada"), ("U8", "Bob Builder")]
    resumed = world.runner.calls[-1].speaker
    assert resumed["conversation"]["thread"] == top and resumed["conversation"]["chat_type"] == "channel"


async def test_the_click_is_acked_before_slack_says_who_clicked(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(asks_then_echoes), answer_policy="anyone")
    world.fake.add_user("U8", display_name="Bo")
    await world.user.mention("set up a web app", user="U7", channel="C1")
    await world.settle()
    release = world.fake.hold("users.info")  # Slack is slow to say who U8 is

    click = await asyncio.wait_for(world.user.click(world.fake.posted(), "clarigate:o1", user="U8"), 2)
    assert click.status_code == 200  # acked at once: the name is asked where the answer's job runs
    release.set()
    await world.settle()

    assert speaker_names(world)[-1] == ("U8", "Bo")
    assert world.fake.last_shown()["text"] == "Going with React."
