"""With ``answer_policy: anyone``, two members type an answer to the same open question in a
channel thread: the second, written while it was still open, is told it was already answered
(as a second click is) and never reaches the agent as a request of its own."""

from __future__ import annotations

import time

from clarigate.adapters.testing import ScriptedRunner, Turn, TurnOutput, asking, choice_request

from .conftest import MakeWorld


def asks_then_echoes(turn: Turn) -> TurnOutput:
    """Ask which framework, and say whatever comes next."""
    if turn.response is None and "web app" in turn.text:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=[f"Going with {turn.response.value if turn.response else turn.text}."])


def posted_texts(world) -> list[str]:
    return [p.get("text", "") for p in world.fake.of("chat.postMessage")]


async def test_a_second_typed_answer_in_a_thread_is_told_it_was_answered(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(asks_then_echoes), answer_policy="anyone")
    _, top = await world.user.mention("set up a web app", user="U7", channel="C1")
    await world.settle()
    written = f"{time.time():.6f}"  # U9 writes "1" while the question is open

    await world.user.channel_message("2", user="U8", channel="C1", thread_ts=top)
    await world.settle()
    assert world.runner.calls[-1].response is not None
    assert world.runner.calls[-1].response.option_id == "option-2"
    await world.user.channel_message("1", user="U9", channel="C1", thread_ts=top, ts=written)
    await world.settle()

    assert len(world.runner.calls) == 2  # U9's "1" is no request of its own
    assert posted_texts(world)[-1].startswith("Already answered by")


async def test_a_typed_answer_written_just_after_the_answer_is_a_request(make_world: MakeWorld):
    """Slack's times are finer than a second: a message written a moment after someone else's
    answer was not written while the question was open, so it runs as a request."""
    world = await make_world(ScriptedRunner(asks_then_echoes), answer_policy="anyone")
    _, top = await world.user.mention("set up a web app", user="U7", channel="C1")
    await world.settle()

    await world.user.channel_message("2", user="U8", channel="C1", thread_ts=top)
    await world.settle()
    after = f"{time.time() + 0.5:.6f}"  # U9 writes "1" half a second after U8's answer was taken
    await world.user.channel_message("1", user="U9", channel="C1", thread_ts=top, ts=after)
    await world.settle()

    assert len(world.runner.calls) == 3 and world.runner.calls[-1].text.endswith("1")
    assert not any(text.startswith("Already answered by") for text in posted_texts(world))
