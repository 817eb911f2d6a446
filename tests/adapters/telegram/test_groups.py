"""Groups as Telegram delivers them: who is someone, who is nobody, and refusals kept small."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, BOB, GROUP, bot_message, command_update, mention_update, message_update
from .test_choices import ask_then_echo

ANONYMOUS_ADMIN = {"id": 1087968824, "is_bot": True, "first_name": "Group", "username": "GroupAnonymousBot"}
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}
CHANNEL = {"id": -100777, "type": "channel", "title": "Announcements"}


async def test_an_anonymous_admin_is_the_group_and_can_talk_and_answer(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    accepted, _ = tg.record()
    mention = [{"type": "mention", "offset": 0, "length": 10}]
    await tg.deliver(
        message_update("@clari_bot deploy", ANONYMOUS_ADMIN, GROUP, entities=mention, sender_chat=GROUP)
    )
    assert accepted[0].sender.user_id == str(GROUP["id"]) and accepted[0].sender.display_name == "Team"
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    await tg.deliver(message_update("2", ANONYMOUS_ADMIN, GROUP, reply_to=question, sender_chat=GROUP))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"


async def test_someone_posting_as_a_channel_is_that_channel(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    mention = [{"type": "mention", "offset": 0, "length": 10}]
    await tg.deliver(
        message_update("@clari_bot hi", CHANNEL_BOT, GROUP, entities=mention, sender_chat=CHANNEL)
    )
    assert [(m.sender.user_id, m.sender.display_name) for m in accepted] == [("-100777", "Announcements")]


async def test_automatic_forwards_from_a_linked_channel_are_ignored(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    accepted, _ = tg.record()
    mention = [{"type": "mention", "offset": 0, "length": 10}]
    forwarded = message_update(
        "@clari_bot new release",
        CHANNEL_BOT,
        GROUP,
        entities=mention,
        sender_chat=CHANNEL,
        is_automatic_forward=True,
    )
    await tg.deliver(forwarded)
    await tg.deliver(message_update("hello", BOB))  # other bots' messages are ignored too, people are not
    await tg.deliver(message_update("hello", {**BOB, "is_bot": True, "id": 999}))
    assert [m.sender.user_id for m in accepted] == [str(BOB["id"])]


def sent_texts(calls) -> list[str]:
    return [c.params["text"] for c in calls if c.method == "sendMessage"]


async def test_in_a_forum_topic_one_persons_question_never_blocks_another(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)  # only the person who asked may answer
    await tg.deliver(mention_update("deploy", BOB, thread_id=77))
    asked = tg.api.of("sendMessage")[-1]
    question = bot_message(asked.result["message_id"], GROUP)
    tg.new_calls()

    alices = mention_update("summarize the logs", ALICE, thread_id=77)
    await tg.deliver(alices)
    ran = runner.calls[1]  # Alice's request ran on the topic's thread, marked as not Bob's answer
    assert ran.thread_id == runner.calls[0].thread_id and ran.response is None
    assert ran.text.startswith("[From Alice") and "question to Bob stays open" in ran.text
    replies = [c for c in tg.new_calls() if c.method == "sendMessage"]
    assert len(replies) == 1 and replies[0].params["text"].endswith("summarize the logs**.")
    assert str(replies[0].params["message_thread_id"]) == "77"
    assert f'"message_id": {alices["message"]["message_id"]}' in replies[0].params["reply_parameters"]

    cancel = command_update("/cancel@clari_bot", ALICE, chat=GROUP, thread_id=77)
    await tg.deliver(cancel)
    notes = [c for c in tg.new_calls() if c.method == "sendMessage"]
    assert sent_texts(notes) == [
        "Only Bob can cancel this question; it stays open. Your own requests still go ahead."
    ]
    assert f'"message_id": {cancel["message"]["message_id"]}' in notes[0].params["reply_parameters"]
    await tg.deliver(command_update("/cancel@clari_bot", ALICE, chat=GROUP, thread_id=77))
    assert sent_texts(tg.new_calls()) == []  # the note is not repeated for this question

    await tg.deliver(command_update("/status@clari_bot", ALICE, chat=GROUP, thread_id=77))
    (status,) = sent_texts(tg.new_calls())
    assert "Waiting for Bob to answer “Which framework?”" in status
    assert not tg.api.of("editMessageText")  # Bob's question is still open

    await tg.deliver(message_update("2", BOB, GROUP, reply_to=question, thread_id=77))
    assert runner.calls[-1].response is not None and runner.calls[-1].response.option_id == "option-2"
    assert runner.calls[-1].thread_id == runner.calls[0].thread_id
    edit = tg.api.of("editMessageText")[-1]
    assert edit.params["message_id"] == str(asked.result["message_id"])
    assert "✅ Answered by Bob: Vue" in edit.params["text"]
    assert sent_texts(tg.new_calls())[-1] == "Going with <b>Vue</b>."
    assert len(runner.calls) == 3
