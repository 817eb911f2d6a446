"""Channel threads as people use them: a bare mention starts one, someone else's typing is told
privately who is asked."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def asks_framework(turn: Turn):
    """First turn asks which framework; the answer gets the echo reply."""
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def test_someone_else_typing_in_a_question_thread_is_told_privately_who_is_asked(make_world: MakeWorld):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    public_before = len(world.fake.of("chat.postMessage"))

    await world.user.channel_message("Vue please", user="U2", thread_ts=ts)
    await world.user.channel_message("hello?", user="U2", thread_ts=ts)
    await world.settle()

    notices = world.fake.of("chat.postEphemeral")
    assert [(n["user"], n["channel"], n.get("thread_ts"), n["text"]) for n in notices] == [
        ("U2", "C1", ts, "Only <@U1> can answer this question."),
    ] * 2
    assert len(world.fake.of("chat.postMessage")) == public_before  # nothing public
    assert [c.response for c in runner.calls] == [None]  # and the agent did not run


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
