"""Channel threads as people use them: a bare mention starts one, and someone else's request
runs while the asker's question stays open."""

from __future__ import annotations

import json

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def asks_framework(turn: Turn):
    """First turn asks which framework; the answer gets the echo reply."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


STILL_GO_AHEAD = "Your own requests still go ahead."


def asks_on_build(turn: Turn):
    """``build`` asks which framework; every other turn gets the echo reply."""
    if turn.response is None and turn.text.endswith("build"):
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def test_in_a_channel_thread_someone_elses_request_runs_and_the_question_stays_open(
    make_world: MakeWorld,
):
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.mention("summarize the incident", user="U2", thread_ts=ts)
    await world.settle()
    alices = runner.calls[1]  # U2's request ran on the thread, marked as not U1's answer
    assert alices.thread_id == runner.calls[0].thread_id and alices.response is None
    assert alices.text.startswith("[From U2") and alices.text.endswith("summarize the incident")
    reply = world.fake.last_shown()
    assert (reply["channel"], reply["thread_ts"]) == ("C1", ts)
    assert reply["text"].startswith("You said: [From U2")
    assert world.fake.edits(question["ts"]) == []  # the question is still open

    await world.user.mention("cancel", user="U2", thread_ts=ts)  # "@bot cancel" in the thread
    await world.settle()
    notes = world.fake.of("chat.postEphemeral")
    assert [(n["user"], n["channel"], n.get("thread_ts"), n["text"]) for n in notes] == [
        ("U2", "C1", ts, "Only <@U1> can cancel this question; it stays open. " + STILL_GO_AHEAD),
    ]
    assert world.fake.edits(question["ts"]) == []

    await world.user.click(question, "clarigate:o2", user="U1")  # U1's answer still continues it
    await world.settle()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Vue"
    assert runner.calls[-1].thread_id == runner.calls[0].thread_id
    answered = 'You said: For your clarification "Which framework?", my answer is: Vue'
    assert world.fake.last_shown()["text"] == answered
    assert "Answered by <@U1>: Vue" in json.dumps(world.fake.edits(question["ts"])[-1])


async def test_in_a_channel_thread_the_askers_typed_answer_still_answers(make_world: MakeWorld):
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    await world.user.mention("what is on today", user="U2", thread_ts=ts)
    await world.settle()

    await world.user.channel_message("2", user="U1", thread_ts=ts)
    await world.settle()
    assert [c.response.value if c.response else None for c in runner.calls] == [None, None, "Vue"]


async def test_a_bare_mention_prompts_and_the_thread_then_needs_no_mention(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    response, ts = await world.user.mention("")  # "@clarigate" alone
    await world.settle()

    assert response.status_code == 200
    prompt = world.fake.posted()
    assert (prompt["channel"], prompt["thread_ts"]) == ("C1", ts)
    assert prompt["text"] == "Yes? Tell me what you need in this thread."
    assert runner.calls == []

    await world.user.channel_message("summarize the incident", thread_ts=ts)  # no mention
    await world.settle()
    assert [c.text for c in runner.calls] == ["summarize the incident"]
    assert world.fake.last_shown()["text"] == "You said: summarize the incident"


async def test_a_bare_mention_in_a_dm_prompts_without_naming_a_thread(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("<@U0BOT>")  # "@clarigate" alone, in the DM's own flow
    await world.settle()
    prompt = world.fake.posted()
    assert prompt["channel"] == "D1" and not prompt.get("thread_ts")
    assert prompt["text"] == "Yes? Tell me what you need."
    assert runner.calls == []


async def test_a_redelivered_bare_mention_prompts_once(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    event = {
        "type": "app_mention",
        "channel": "C1",
        "user": "U1",
        "text": "<@U0BOT>",
        "ts": "1800000001.000100",
    }
    await world.user.event(event, event_id="EvBARE")
    await world.user.event(event, event_id="EvBARE", retry=1)
    await world.settle()
    assert [p["text"] for p in world.fake.of("chat.postMessage")] == [
        "Yes? Tell me what you need in this thread."
    ]


async def test_a_bare_mention_from_someone_not_allowed_is_refused_not_prompted(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(), slack={"allowed_users": ["U9"]})
    _, ts = await world.user.mention("", user="U1")
    await world.settle()
    texts = [p["text"] for p in world.fake.of("chat.postMessage")]
    assert "Yes? Tell me what you need in this thread." not in texts
    assert len(texts) == 1  # the core's one refusal
