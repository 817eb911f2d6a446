"""Groups as Telegram delivers them: who is someone, who is nobody, and refusals kept small."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, BOB, GROUP, bot_message, message_update
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


async def test_a_refusal_for_one_person_is_not_repeated_to_the_whole_group(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)  # only the person who asked may answer
    mention = [{"type": "mention", "offset": 0, "length": 10}]
    await tg.deliver(message_update("@clari_bot deploy", ALICE, GROUP, entities=mention))
    question = bot_message(tg.api.of("sendMessage")[-1].result["message_id"], GROUP)
    tg.new_calls()
    first = message_update("2", BOB, GROUP, reply_to=question)
    await tg.deliver(first)
    notes = [c for c in tg.new_calls() if c.method == "sendMessage"]
    assert [n.params["text"] for n in notes] == ["Only Alice can answer this question."]
    assert f'"message_id": {first["message"]["message_id"]}' in notes[0].params["reply_parameters"]
    for text in ("1", "please?", "hello?"):
        await tg.deliver(message_update(text, BOB, GROUP, reply_to=question))
    assert [c for c in tg.new_calls() if c.method == "sendMessage"] == []
    assert len(runner.calls) == 1  # nothing ran for Bob
