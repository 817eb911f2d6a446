"""Commands written at the top level of a plain group (not a forum): they act on the conversation
the sender is in there, never start one of their own (README, Telegram: Commands)."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, BOB, bot_message, command_update, mention_update, message_update
from .test_choices import ask_then_echo

PLAIN_GROUP = {"id": -4242, "type": "group", "title": "Ops"}


def sent_texts(calls) -> list[str]:
    return [c.params["text"] for c in calls if c.method == "sendMessage"]


async def test_a_top_level_cancel_dismisses_the_senders_open_question(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    asked = tg.api.of("sendMessage")[-1]
    tg.new_calls()

    await tg.deliver(command_update("/cancel@clari_bot", ALICE, chat=PLAIN_GROUP))
    said = sent_texts(tg.new_calls())[0]  # then the agent goes on without the answer
    assert said.startswith("✖ Cancelled the question “Which framework?”")
    edit = tg.api.of("editMessageText")[-1]
    assert edit.params["message_id"] == str(asked.result["message_id"])
    assert "Cancelled by Alice" in edit.params["text"]
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"
    assert len({call.thread_id for call in runner.calls}) == 1  # no new conversation


async def test_a_top_level_status_tells_of_the_senders_conversation(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    tg.new_calls()
    await tg.deliver(command_update("/status@clari_bot", ALICE, chat=PLAIN_GROUP))
    (status,) = sent_texts(tg.new_calls())
    assert "Which framework?" in status


async def test_a_top_level_cancel_of_someone_with_no_conversation_cancels_nothing(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    asked = tg.api.of("sendMessage")[-1]
    tg.new_calls()
    await tg.deliver(command_update("/cancel@clari_bot", BOB, chat=PLAIN_GROUP))
    assert sent_texts(tg.new_calls()) == ["There is no open question to cancel."]
    assert not tg.api.of("editMessageText")  # Alice's question stays open
    question = bot_message(asked.result["message_id"], PLAIN_GROUP)
    await tg.deliver(message_update("2", ALICE, PLAIN_GROUP, reply_to=question))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"


async def test_a_top_level_help_between_leaves_the_cancel_on_the_senders_question(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    await tg.deliver(command_update("/help@clari_bot", ALICE, chat=PLAIN_GROUP))  # how do I stop it?
    tg.new_calls()
    await tg.deliver(command_update("/cancel@clari_bot", ALICE, chat=PLAIN_GROUP))
    said = sent_texts(tg.new_calls())[0]
    assert said.startswith("✖ Cancelled the question “Which framework?”")
    assert len({call.thread_id for call in runner.calls}) == 1  # no new conversation


async def test_a_top_level_alias_command_between_leaves_the_status_on_the_senders_question(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    await tg.deliver(command_update("/ask@clari_bot deploy", ALICE, chat=PLAIN_GROUP))
    await tg.deliver(mention_update("/帮助", ALICE, chat=PLAIN_GROUP))  # /help by its Chinese name
    tg.new_calls()
    await tg.deliver(command_update("/status@clari_bot", ALICE, chat=PLAIN_GROUP))
    (status,) = sent_texts(tg.new_calls())
    assert "Which framework?" in status
