"""``@bot cancel.`` in a channel thread is the thread's command, as ``/cancel.`` is elsewhere:
sentence punctuation after a command's name does not make it a request for the agent."""

from __future__ import annotations

import pytest

from clarigate.adapters.slack.commands import mention_command
from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld
from .test_threads_and_people import asks_on_build


@pytest.mark.parametrize("typed", ["cancel", "cancel.", "Cancel!", "cancel。", "/new？"])
def test_a_mentioned_command_may_end_a_sentence(typed: str) -> None:
    assert mention_command(typed) in ("/cancel", "/new")


@pytest.mark.parametrize("typed", ["cancel it", "cancel.txt", "...", "please"])
def test_other_words_after_a_mention_are_no_command(typed: str) -> None:
    assert mention_command(typed) is None


async def test_at_bot_cancel_with_a_full_stop_dismisses_the_question(make_world: MakeWorld) -> None:
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.mention("cancel.", user="U1", thread_ts=ts)
    await world.settle()

    assert world.fake.edits(question["ts"]), "the question was not closed"
    assert all(not call.text.endswith("cancel.") for call in runner.calls)  # never a request
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"
