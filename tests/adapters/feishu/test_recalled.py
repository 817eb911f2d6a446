"""A person recalls (撤回) their group message while the bot is still working on it."""

from __future__ import annotations

import pytest

from clarigate.adapters.feishu.open_api import FeishuApiError
from clarigate.adapters.feishu.render import card_json, render_notice
from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import render_text_fallback
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply

from .cards import button, payload, text_of
from .events import card_action, message_event

GROUP = {"chat": "oc_group", "chat_type": "group", "mention_bot": True}


def replies(turn):
    return TurnOutput(replies=["Here is **the plan**."])


async def test_a_reply_to_a_recalled_group_message_still_reaches_the_chat(make_bot):
    """Threads allowed (the usual group): the reply's thread root was recalled meanwhile.
    Feishu refuses the reply (230011, as the fake does for a recalled message); the gateway
    posts it in the chat when the group refuses threads (test_fallbacks), but not here."""
    bot = await make_bot(ScriptedRunner(replies), progress_after_seconds=100)
    bot.api.fail_next(400, 230011, path_part="om_gone/reply", times=5)  # recalled for good
    await bot.deliver(message_event("plan it", message_id="om_gone", **GROUP))
    await bot.gateway.drain()
    delivered = [c for c in bot.api.posted() if c.code == 0]
    assert [c.path for c in bot.api.posted()][:1] == ["/open-apis/im/v1/messages/om_gone/reply"]
    assert any("the plan" in text_of(c.card()) for c in delivered), [
        (c.path, c.code) for c in bot.api.posted()
    ]


def asks_then_replies(turn):
    if turn.response is not None:
        return TurnOutput(replies=[f"Going with {turn.response.value}."])
    request = choice_request("Which region?", ["eu", "us"])
    return TurnOutput(request=request, fallback_text=render_text_fallback(request))


async def test_the_answer_after_a_question_whose_thread_root_was_recalled_reaches_the_chat(make_bot):
    """Mid-question: the person recalls the message that asked, then clicks an option on the
    question card (still there). The click is taken ("✅ Answered"), the agent runs, and its
    answer must reach the person somewhere."""
    bot = await make_bot(ScriptedRunner(asks_then_replies), progress_after_seconds=100)
    await bot.deliver(message_event("deploy", message_id="om_root", **GROUP))
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]
    bot.api.fail_next(400, 230011, path_part="om_root/reply", times=5)  # recalled: 撤回
    reply = await bot.click(card_action(payload(button(card, "us")), chat="oc_group", message_id=message_id))
    assert reply["toast"]["type"] == "success"
    await bot.gateway.drain()
    assert bot.runner.calls[-1].response.value == "us"
    delivered = [c for c in bot.api.posted() if c.code == 0]
    assert any("Going with us" in text_of(c.card()) for c in delivered), [
        (c.path, c.code) for c in bot.api.posted()
    ]


async def test_the_post_in_place_of_a_reply_to_a_recalled_message_is_made_once_when_retried(make_bot):
    """The core retries a delivery whose answer it did not get: the post in the chat that stands
    in for the refused thread reply carries a ``uuid`` of its own, so Feishu shows it once."""
    bot = await make_bot()
    bot.api.fail_next(400, 230011, path_part="om_gone/reply", times=5)
    conversation = Conversation(platform="feishu", chat_id="oc_group", topic="om_gone", reply_to="om_gone")
    card = card_json(render_notice("Here is **the plan**."))
    first = await bot.adapter.destinations.deliver(conversation, card, key="delivery-1")
    again = await bot.adapter.destinations.deliver(conversation, card, key="delivery-1")
    assert again.message_id == first.message_id
    posted = [c for c in bot.api.posted() if c.code == 0]
    assert len({bot.api.by_uuid[c.body["uuid"]] for c in posted}) == 1
    assert posted[0].path == "/open-apis/im/v1/messages" and posted[0].body["receive_id"] == "oc_group"
    assert "the plan" in text_of(posted[0].card())


@pytest.mark.parametrize("threads", [True, False], ids=["thread-reply", "quoting-reply"])
async def test_a_reply_taken_before_its_root_was_recalled_is_not_posted_again(make_bot, threads):
    """Feishu took the reply (in the thread; or quoting the root, in a group that refuses thread
    replies), but its answer was lost (the connection dropped); the person then recalled the
    root, and the core's retry of the item is refused (230011). The post in the chat that stands
    in for it must not show the reply a second time."""
    bot = await make_bot()
    bot.api.refuse_thread_replies = not threads
    conversation = Conversation(platform="feishu", chat_id="oc_group", topic="om_root", reply_to="om_root")
    reply = TextReply(text="Here is **the plan**.", delivery_id="6f0c1a9e-3b1d-5c8e-9a41-0d2b7f3e8c12")
    bot.api.answers_lost.append("om_root/reply")
    with pytest.raises(FeishuApiError) as lost:
        await bot.adapter.send(conversation, reply)
    assert not lost.value.permanent  # so the core sends the item again
    assert [text_of(card) for card in bot.api.shown()] == ["Here is **the plan**."]  # Feishu took it
    bot.api.fail_next(400, 230011, path_part="om_root/reply", times=5)  # recalled (撤回) meanwhile
    await bot.adapter.send(conversation, reply)  # the core's retry
    calls = [(c.path, c.code) for c in bot.api.posted()]
    assert [text_of(card) for card in bot.api.shown()] == ["Here is **the plan**."], calls


async def test_a_streaming_card_sent_unanswered_under_a_recalled_message_is_not_left_streaming(make_bot):
    """The person recalled the message the run answers; the streaming card, posted in the chat
    instead, was taken by Feishu but its answer lost, so the run goes on in an edited card. The
    streaming card shown meanwhile must not stay half-written in streaming mode."""
    bot = await make_bot()
    group = Conversation(platform="feishu", chat_id="oc_group", topic="om_gone", reply_to="om_gone")
    bot.api.fail_next(400, 230011, path_part="om_gone/reply", times=5)  # recalled (撤回)
    bot.api.answers_lost.append("/open-apis/im/v1/messages")  # the post taken, never answered
    view = LiveView(mode="card", text="Half of the plan", shown="")
    ref = await bot.adapter.show_live(group, view, None)
    assert ref is not None and ref.extra["mode"] == "edit"  # the run goes on in an edited card
    [entity] = bot.api.entities.values()
    assert entity.message_id is not None  # Feishu showed the streaming card
    assert entity.streaming == "off" and "Half of the plan" not in text_of(bot.api.cards[entity.message_id])
    assert [text_of(card) for card in bot.api.shown()][-1].startswith("Half of the plan")
