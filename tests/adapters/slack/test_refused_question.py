"""A question Slack refused because the bot is not in the channel (``not_in_channel``) was never
seen: it does not stay open, so a line written in the thread later is not taken as its answer."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request

from .conftest import MakeWorld


def asks_framework(turn: Turn):
    if turn.response is None and turn.text.endswith("build"):
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return ScriptedRunner().script(turn)


async def test_a_question_refused_as_not_in_channel_is_not_answered_by_a_later_line(make_world: MakeWorld):
    runner = ScriptedRunner(asks_framework)
    world = await make_world(runner, progress_after_seconds=100)
    world.fake.refuse_next("not_in_channel", {"chat.postMessage"})
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    assert [c.answer["error"] for c in world.fake.attempts("chat.postMessage")] == ["not_in_channel"]

    # the bot is invited back; U1 writes in the thread without mentioning it
    await world.user.channel_message("Vue", user="U1", thread_ts=ts)
    await world.settle()
    assert runner.calls[0].text.endswith("build")
    for later in runner.calls[1:]:
        assert later.response is None and later.text.endswith("Vue")  # a request, not an answer
        assert "For your clarification" not in later.text
