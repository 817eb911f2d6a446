"""Reading Feishu message events: who wrote what, where, and whether the bot was meant."""

from __future__ import annotations

import json

import pytest

from adapters.feishu.receive import MalformedEvent, parse_message

from .events import message_event


def post_event(paragraphs: list[list[dict]], **kwargs) -> dict:
    """A rich-text (post) message event."""
    event = message_event("", **kwargs)
    message = event["event"]["message"]
    message["message_type"] = "post"
    message["content"] = json.dumps({"title": "", "content": paragraphs})
    return event


def test_p2p_message_is_one_thread_per_chat():
    msg = parse_message(message_event("hello", chat="oc_dm", event_id="ev-1"))
    conv = msg.conversation
    assert (conv.chat_id, conv.topic, conv.is_direct, conv.reply_to) == ("oc_dm", None, True, None)
    assert (msg.text, msg.event_id, msg.sender.user_id, msg.is_mention) == ("hello", "ev-1", "ou_alice", True)


def test_group_mention_starts_a_thread_at_its_message_and_replies_stay_in_it():
    top = parse_message(
        message_event("go", chat="oc_g", chat_type="group", message_id="om_7", mention_bot=True)
    )
    assert (top.text, top.conversation.topic, top.conversation.reply_to, top.is_mention) == (
        "go",
        "om_7",
        "om_7",
        True,
    )
    reply = parse_message(message_event("more", chat="oc_g", chat_type="group", root_id="om_7"))
    assert reply.conversation.thread_key == top.conversation.thread_key and not reply.is_mention


def test_mentions_of_other_people_are_not_mentions_of_the_bot():
    event = message_event("ask @_user_2", chat="oc_g", chat_type="group", mention_bot=True)
    event["event"]["message"]["mentions"].append(
        {"key": "@_user_2", "id": {"open_id": "ou_bob"}, "name": "Bob"}
    )
    msg = parse_message(event, bot_open_id="ou_bot")
    assert msg.text == "ask @Bob" and msg.is_mention
    event["event"]["message"]["mentions"] = event["event"]["message"]["mentions"][1:]
    assert not parse_message(event, bot_open_id="ou_bot").is_mention


def test_post_messages_read_as_text_and_other_kinds_as_nothing():
    paragraphs = [
        [{"tag": "at", "user_id": "@_user_1", "user_name": "clarigate"}, {"tag": "text", "text": " deploy "}],
        [{"tag": "a", "href": "https://x", "text": "the docs"}],
    ]
    assert parse_message(post_event(paragraphs, mention_bot=True)).text == "deploy \nthe docs"
    image = message_event("")
    image["event"]["message"].update(message_type="image", content=json.dumps({"image_key": "img_1"}))
    assert parse_message(image).text == ""


def test_bots_are_ignored_and_broken_events_are_malformed():
    event = message_event("beep")
    event["event"]["sender"]["sender_type"] = "app"
    assert parse_message(event) is None
    broken = message_event("x")
    broken["event"]["message"]["content"] = "{not json"
    with pytest.raises(MalformedEvent):
        parse_message(broken)


def test_ten_and_more_mentions_keep_their_names():
    event = message_event("ping", chat="oc_g", chat_type="group", mention_bot=True)
    message = event["event"]["message"]
    people = [{"key": f"@_user_{n}", "id": {"open_id": f"ou_p{n}"}, "name": f"P{n}"} for n in range(2, 12)]
    message["mentions"].extend(people)
    message["content"] = json.dumps({"text": "@_user_1 ask @_user_1 " + " ".join(p["key"] for p in people)})
    text = parse_message(event, bot_open_id="ou_bot").text
    assert text == "ask @clarigate @P2 @P3 @P4 @P5 @P6 @P7 @P8 @P9 @P10 @P11"
