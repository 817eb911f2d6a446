"""A private note that names someone shows them as a mention (``<@U…>``, which Slack shows as their
current name), never as the display name written into the text: a name is what a person chose,
and it must neither ping a channel nor format the note."""

from __future__ import annotations

import json

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def asks_on_build(turn: Turn):
    """``build`` asks which framework; every other turn gets the echo reply."""
    if turn.response is None and turn.text.endswith("build"):
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def asked_in_a_channel(make_world: MakeWorld, name: str):
    """U1 (``name`` to ``users.info``) asks for a build in channel C1: the world, the question and
    the thread it is in."""
    world = await make_world(ScriptedRunner(asks_on_build))
    world.fake.add_user("U1", display_name=name, real_name=name)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    return world, world.fake.posted(), ts


def notes_to(world, user: str) -> list[dict]:
    return [n for n in world.fake.of("chat.postEphemeral") if n["user"] == user]


async def test_a_click_on_someone_elses_question_names_the_asker_as_a_mention(make_world: MakeWorld):
    world, question, _ = await asked_in_a_channel(make_world, "Ada Lovelace")

    await world.user.click(question, "clarigate:o1", user="U2")
    await world.user.click(question, "clarigate:other", user="U2")  # no "Other…" modal for U2 either
    await world.adapter.idle()
    await world.settle()

    notes = notes_to(world, "U2")
    assert [(n["channel"], n["text"]) for n in notes] == [("C1", "Only <@U1> can answer this question.")] * 2
    assert "Ada" not in json.dumps(notes)
    assert world.fake.edits(question["ts"]) == [] and world.fake.of("views.open") == []


async def test_cancel_of_someone_elses_question_names_the_asker_as_a_mention(make_world: MakeWorld):
    world, question, ts = await asked_in_a_channel(make_world, "Ada Lovelace")

    await world.user.mention("cancel", user="U2", thread_ts=ts)  # "@bot cancel" in the thread
    await world.settle()

    notes = notes_to(world, "U2")
    assert [(n["channel"], n.get("thread_ts")) for n in notes] == [("C1", ts)]
    assert notes[0]["text"].startswith("Only <@U1> can cancel this question; it stays open.")
    assert "Ada" not in json.dumps(notes)
    assert world.fake.edits(question["ts"]) == []


async def test_a_click_after_the_asker_cancelled_names_them_as_a_mention(make_world: MakeWorld):
    world, question, ts = await asked_in_a_channel(make_world, "Ada Lovelace")
    await world.user.mention("cancel", user="U1", thread_ts=ts)  # the asker's own /cancel
    await world.settle()

    await world.user.click(question, "clarigate:o1", user="U2")
    await world.settle()

    notes = notes_to(world, "U2")
    assert [n["text"] for n in notes] == ["<@U1> cancelled this question."]
    assert "Ada" not in json.dumps(notes)


async def test_a_hostile_display_name_neither_pings_nor_formats_the_note(make_world: MakeWorld):
    world, question, ts = await asked_in_a_channel(make_world, "<!channel> *everyone* @here")

    await world.user.click(question, "clarigate:o1", user="U2")
    await world.user.mention("cancel", user="U2", thread_ts=ts)
    await world.settle()

    notes = notes_to(world, "U2")
    assert len(notes) == 2 and all(n["text"].startswith("Only <@U1> can ") for n in notes)
    shown = json.dumps(notes)
    assert "<!channel>" not in shown and "*everyone*" not in shown and "@here" not in shown
