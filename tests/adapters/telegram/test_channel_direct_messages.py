"""A channel's direct messages (Bot API 9.2): the chat is a supergroup with ``is_direct_messages``,
and each person who writes to the channel has a topic of it (``direct_messages_topic`` on their
messages). Each person's topic is their private conversation with the channel: the bot answers
every message there, mention or not, as in a private chat (an ordinary supergroup still needs a
mention). Each topic is a conversation of its own, and everything the bot sends there
(replies, questions, files) names that topic, as Telegram requires: ``direct_messages_topic_id`` is
"required if the message is sent to a direct messages chat" (without it the send is refused).
"""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.gateway.store.memory import MemoryStore

from ..files_agent import CSV, PNG, files_runner
from .harness import (
    ALICE,
    BOB,
    GROUP,
    callback_update,
    command_update,
    mention_update,
    message_update,
    open_bench,
)
from .test_choices import ask_then_echo, clarification_call
from .test_form_details import script

CHANNEL_DMS = {"id": -1009990, "type": "supergroup", "title": "News DMs", "is_direct_messages": True}
ALICES, BOBS = 555, 556  # the topics Alice's and Bob's messages to the channel are in
NEWS = {"id": -1009991, "type": "channel", "title": "News"}  # the channel those are its DMs of
CHANNEL_BOT = {"id": 136817688, "is_bot": True, "first_name": "Channel", "username": "Channel_Bot"}


def in_dms(text: str, user: dict[str, Any], topic: int) -> dict[str, Any]:
    """``user``'s message in their topic of the channel's direct messages chat, mentioning the bot."""
    return mention_update(
        text, user, chat=CHANNEL_DMS, direct_messages_topic={"topic_id": topic, "user": user}
    )


def said_in_dms(text: str, user: dict[str, Any], topic: int) -> dict[str, Any]:
    """``user``'s plain message in their topic, naming no one: said to the channel, as in a private chat."""
    return message_update(
        text, user, chat=CHANNEL_DMS, direct_messages_topic={"topic_id": topic, "user": user}
    )


def where(api: Any, method: str = "sendMessage") -> list[tuple[str, str | None]]:
    """(text, direct messages topic) of each call of ``method``."""
    return [(str(c.params.get("text", "")), c.params.get("direct_messages_topic_id")) for c in api.of(method)]


async def test_each_persons_topic_is_a_conversation_answered_in_that_topic(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    await tg.deliver(in_dms("hello there", ALICE, ALICES))
    await tg.deliver(in_dms("news tip", BOB, BOBS))
    await tg.deliver(in_dms("me again", ALICE, ALICES))
    await tg.settle()
    alice, bob, alice_again = (c.thread_id for c in runner.calls)
    assert alice == alice_again != bob
    assert where(tg.api) == [
        ("You said: hello there", "555"),
        ("You said: news tip", "556"),
        ("You said: me again", "555"),
    ]
    assert all(c.result is not None for c in tg.api.of("sendMessage"))  # none refused
    # "typing…" takes no direct messages topic (``sendChatAction``): shown in the chat
    assert [c.params["chat_id"] for c in tg.api.of("sendChatAction")][:1] == ["-1009990"]


async def test_a_message_naming_no_one_is_answered_in_the_persons_topic(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    await tg.deliver(said_in_dms("is the morning digest late today?", ALICE, ALICES))
    await tg.deliver(said_in_dms("a tip for you", BOB, BOBS))
    await tg.settle()
    assert [c.text for c in runner.calls] == ["is the morning digest late today?", "a tip for you"]
    assert runner.calls[0].thread_id != runner.calls[1].thread_id  # each person's own conversation
    assert where(tg.api) == [
        ("You said: is the morning digest late today?", "555"),
        ("You said: a tip for you", "556"),
    ]
    assert all(c.result is not None for c in tg.api.of("sendMessage"))


async def test_the_channels_own_reply_to_a_person_is_not_answered_by_the_bot(bench):
    """A channel admin answering Alice in her topic writes on behalf of the channel (``sender_chat``,
    ``from`` a placeholder): said to Alice, not to the bot, which keeps out unless addressed."""
    runner = ScriptedRunner()
    tg = await bench(runner)
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    topic = {"topic_id": ALICES, "user": ALICE}
    as_channel = {"sender_chat": NEWS, "direct_messages_topic": topic}
    await tg.deliver(
        message_update("Thanks, Alice: we will look into it", CHANNEL_BOT, CHANNEL_DMS, **as_channel)
    )
    await tg.settle()
    assert runner.calls == [] and tg.api.of("sendMessage") == []
    await tg.deliver(mention_update("draft a reply to her", CHANNEL_BOT, CHANNEL_DMS, **as_channel))
    await tg.settle()
    assert [c.text for c in runner.calls] == ["draft a reply to her"]  # addressed, the bot answers
    assert where(tg.api) == [("You said: draft a reply to her", "555")]


async def test_an_ordinary_supergroup_still_needs_a_mention(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("is the morning digest late today?", ALICE, chat=GROUP))
    await tg.settle()
    assert runner.calls == [] and tg.api.of("sendMessage") == []


async def test_help_in_the_persons_topic_asks_for_no_mention(bench):
    tg = await bench(ScriptedRunner())
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    dms = {"chat": CHANNEL_DMS, "direct_messages_topic": {"topic_id": ALICES, "user": ALICE}}
    await tg.deliver(command_update("/help", ALICE, **dms))
    await tg.deliver(command_update("/help", ALICE, chat=GROUP))
    (in_topic, topic), (in_group, _) = where(tg.api)
    assert topic == "555" and "/ask@clari_bot" not in in_topic  # written to the channel, it just reads
    assert "/ask@clari_bot" in in_group  # a group's bot sees only what is addressed to it


async def test_a_question_is_asked_and_answered_in_the_persons_topic(bench):
    runner = ScriptedRunner(ask_then_echo(choice_request("Which edition?", ["Morning", "Evening"])))
    tg = await bench(runner)
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    await tg.deliver(in_dms("deploy the digest", ALICE, ALICES))
    asked = clarification_call(tg)
    assert asked.params["direct_messages_topic_id"] == "555" and asked.result is not None
    data = [b["callback_data"] for row in asked.buttons for b in row]
    tap = callback_update(data[1], asked.result["message_id"], ALICE, chat=CHANNEL_DMS)
    tap["callback_query"]["message"]["direct_messages_topic"] = {"topic_id": ALICES}
    await tg.deliver(tap)
    await tg.settle()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Evening"
    assert where(tg.api)[-1] == ("Going with <b>Evening</b>.", "555")
    assert all(c.result is not None for c in tg.api.of("sendMessage"))


async def test_files_reach_the_persons_topic(bot_api):
    store = MemoryStore("files-telegram-channel-dms")
    tg = await open_bench(bot_api, store, await files_runner())
    bot_api.direct_messages.add(CHANNEL_DMS["id"])
    try:
        await tg.deliver(in_dms("sales report for eu", ALICE, ALICES))
        await tg.settle()
        assert [(f.kind, f.data) for f in bot_api.sent_files] == [("document", CSV), ("photo", PNG)]
        sent = [*bot_api.of("sendDocument"), *bot_api.of("sendPhoto")]
        assert {c.params.get("direct_messages_topic_id") for c in sent} == {"555"}
        assert where(bot_api)[-1] == ("Here is the report.", "555")
    finally:
        await tg.close()
        await store.close()


async def test_a_form_in_the_persons_topic_takes_what_they_type_next_as_in_a_private_chat(bench):
    runner = ScriptedRunner(script)
    tg = await bench(runner)
    tg.api.direct_messages.add(CHANNEL_DMS["id"])
    await tg.deliver(said_in_dms("deploy", ALICE, ALICES))
    asked = clarification_call(tg)
    form_id = asked.result["message_id"]
    token = asked.buttons[0][0]["callback_data"].split("|")[0]
    for action in ("form", "s1", "d", "y"):
        tap = callback_update(f"{token}|{action}", form_id, ALICE, chat=CHANNEL_DMS)
        tap["callback_query"]["message"]["direct_messages_topic"] = {"topic_id": ALICES}
        await tg.deliver(tap)

    def shown() -> str:
        return tg.api.messages[(CHANNEL_DMS["id"], form_id)][0]

    assert "4/6 · Replicas" in shown()
    await tg.deliver(said_in_dms("3", ALICE, ALICES))  # no reply: the form is the agent's latest message
    assert "5/6 · Deadline" in shown()
    await tg.deliver(said_in_dms("a tip for you", BOB, BOBS))  # Bob's topic: the agent answers him there
    await tg.deliver(said_in_dms("2026-12-01", ALICE, ALICES))  # still Alice's form's latest message
    await tg.settle()
    assert "6/6" in shown()
    assert [c.text for c in runner.calls] == ["deploy", "a tip for you"]
