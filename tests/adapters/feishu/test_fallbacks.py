"""When Feishu refuses the usual form or place of a message, the person still gets it.

A card Feishu will not make (230099, every time) goes as a plain text message, a reply as
much as a question; a group that refuses thread replies (230071) gets them in the chat, as
replies quoting the message that asked, so a reply to them stays in its conversation.
"""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import render_text_fallback

from .cards import text_of
from .events import message_event

GROUP = {"chat": "oc_group", "chat_type": "group", "mention_bot": True}


def asks_then_replies(turn):
    if turn.response is not None:
        return TurnOutput(replies=[f"Going with {turn.response.value}."])
    if turn.text.endswith("question"):
        request = choice_request("Which region?", ["eu", "us"])
        return TurnOutput(request=request, fallback_text=render_text_fallback(request))
    return TurnOutput(replies=["See <at id=all></at> **the plan**:\n\n1. build\n2. ship"])


async def test_a_reply_whose_card_is_always_refused_arrives_as_text(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_cards = True  # Feishu will make no card of this content, however often asked
    await bot.deliver(message_event("plan it"))
    await bot.gateway.drain()
    calls = bot.api.posted()
    assert [(c.body["msg_type"], c.code) for c in calls] == [("interactive", 230099), ("text", 0)]
    (text,) = bot.api.texts.values()
    assert text == "See \u2039at id=all>\u2039/at> **the plan**:\n\n1. build\n2. ship"  # nobody pinged
    assert calls[1].body["receive_id"] == "oc_p2p"


async def test_a_question_whose_cards_are_always_refused_is_asked_as_text_and_answered(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_cards = True
    await bot.deliver(message_event("ask me a question"))
    await bot.gateway.drain()
    kinds = [(c.body["msg_type"], c.code) for c in bot.api.posted()]
    # the question's card, its text rendering as a card, then that text as a text message
    assert kinds == [("interactive", 230099), ("interactive", 230099), ("text", 0)]
    (text,) = bot.api.texts.values()
    assert "Which region?" in text and "1. eu" in text and "2. us" in text

    await bot.deliver(message_event("2"))  # answered by a typed reply
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.value == "us"
    assert list(bot.api.texts.values())[-1] == "Going with us."


async def test_a_group_refusing_thread_replies_gets_the_question_and_reply_in_the_chat(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_thread_replies = True
    await bot.deliver(message_event("ask me a question", message_id="om_root", **GROUP))
    await bot.gateway.drain()
    refused, question = bot.api.posted()
    assert refused.path == "/open-apis/im/v1/messages/om_root/reply" and refused.code == 230071
    # in the chat, quoting the message that asked: its conversation's root stays the same
    assert question.path == "/open-apis/im/v1/messages/om_root/reply" and question.code == 0
    assert question.body["reply_in_thread"] is False
    assert "Which region?" in text_of(question.card())

    await bot.deliver(message_event("plan it", message_id="om_next", **GROUP))
    await bot.gateway.drain()
    (reply,) = bot.api.posted()[2:]  # remembered: no thread reply tried again in this chat
    assert reply.path == "/open-apis/im/v1/messages/om_next/reply" and reply.body["reply_in_thread"] is False
    assert "the plan" in text_of(reply.card())


async def test_in_such_a_group_a_reply_whose_message_was_recalled_is_posted_in_the_chat(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_thread_replies = True
    await bot.deliver(message_event("plan it", message_id="om_root", **GROUP))
    await bot.gateway.drain()
    bot.api.fail_next(400, 230011, path_part="om_gone/reply")  # the person recalled their message
    await bot.deliver(message_event("plan it", message_id="om_gone", **GROUP))
    await bot.gateway.drain()
    gone, posted = bot.api.posted()[-2:]
    assert gone.code == 230011
    assert posted.path == "/open-apis/im/v1/messages" and posted.body["receive_id"] == "oc_group"
    assert posted.code == 0 and "the plan" in text_of(posted.card())


def root_of_last_message(bot) -> str:
    """The ``root_id`` Feishu gives a reply to the bot's latest message: the root of the message
    that one replies to (here always a conversation's first message), or that message itself
    when it was posted in the chat."""
    last = [c for c in bot.api.posted() if c.code == 0][-1]
    if last.path.endswith("/reply"):
        return last.path.split("/")[-2]
    return bot.api.by_uuid[last.body["uuid"]]


async def test_in_such_a_group_a_reply_to_the_question_answers_it_and_cancel_dismisses_it(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_thread_replies = True
    bot.api.refuse_cards = True  # asked as a text message: typing is the only way to answer
    await bot.deliver(message_event("ask me a question", message_id="om_root", **GROUP))
    await bot.gateway.drain()
    # the person replies to the bot's question
    await bot.deliver(message_event("2", message_id="om_answer", root_id=root_of_last_message(bot), **GROUP))
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response is not None and bot.runner.calls[-1].response.value == "us"

    await bot.deliver(message_event("ask me a question", message_id="om_again", **GROUP))
    await bot.gateway.drain()
    asked_in = bot.runner.calls[-1].thread_id
    await bot.deliver(
        message_event("/cancel", message_id="om_cancel", root_id=root_of_last_message(bot), **GROUP)
    )
    await bot.gateway.drain()
    record = await bot.gateway.store.pending_for_thread(asked_in)
    assert record is None or record.status != "pending"
    declined = bot.runner.calls[-1].response
    assert declined is not None and declined.response_kind == "declined"


async def test_a_refused_question_card_in_such_a_group_falls_back_to_text_in_the_chat(make_bot):
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    bot.api.refuse_thread_replies = True
    bot.api.refuse_cards = True
    await bot.deliver(message_event("ask me a question", message_id="om_root", **GROUP))
    await bot.gateway.drain()
    delivered = [c for c in bot.api.posted() if c.code == 0]
    assert [(c.path, c.body["msg_type"]) for c in delivered] == [
        ("/open-apis/im/v1/messages/om_root/reply", "text")
    ]
    assert delivered[0].body["reply_in_thread"] is False
    assert "Which region?" in next(iter(bot.api.texts.values()))
