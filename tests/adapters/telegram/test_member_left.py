"""A member who leaves a group: the question only they could answer closes, as their Cancel would."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, BOB, GROUP, bot_message, mention_update, message_update
from .test_choices import ask_then_echo

CAROL = {"id": 333, "is_bot": False, "first_name": "Carol"}


def left_update(person: dict[str, Any], by: dict[str, Any] | None = None) -> dict[str, Any]:
    """The service message Telegram sends when ``person`` leaves ``GROUP`` (``by`` removed them)."""
    return message_update(None, by or person, GROUP, left_chat_member=person)


async def test_the_asker_leaving_closes_their_question_and_the_chain_goes_on(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)  # only the person who asked may answer (answer_policy: starter)
    await tg.deliver(mention_update("deploy", BOB))
    asked = tg.api.of("sendMessage")[-1]
    question = bot_message(asked.result["message_id"], GROUP)
    await tg.deliver(left_update(CAROL))  # someone else leaving changes nothing
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1
    tg.new_calls()

    await tg.deliver(left_update(BOB, by=ALICE))  # an admin removes Bob
    await tg.settle()
    edit = tg.api.of("editMessageText")[-1]  # the question is shown closed, as a Cancel shows it
    assert edit.params["message_id"] == str(asked.result["message_id"])
    told = runner.calls[-1].response  # the agent is told, in a follow-up run on the thread
    assert told is not None and told.response_kind == "declined" and told.reason == "cancelled"
    assert runner.calls[-1].thread_id == runner.calls[0].thread_id

    await tg.deliver(message_update("Vue", ALICE, GROUP, reply_to=question))  # the group goes on
    ran = runner.calls[-1]
    assert ran.response is None and ran.text.endswith("Vue") and "stays open" not in ran.text


async def test_a_question_anyone_may_answer_stays_open_when_its_asker_leaves(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner, answer_policy="anyone")
    await tg.deliver(mention_update("deploy", BOB))
    await tg.deliver(left_update(BOB))
    await tg.settle()
    assert not tg.api.of("editMessageText") and len(runner.calls) == 1
