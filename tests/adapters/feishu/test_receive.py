"""Reading Feishu message events: who wrote what, where, and whether the bot was meant."""

from __future__ import annotations

import json

import pytest

from clarigate.adapters.feishu.receive import MalformedEvent, parse_message

from .events import message_event


def post_event(paragraphs: list[list[dict]], title: str = "", **kwargs) -> dict:
    """A rich-text (post) message event, content as events carry it (not wrapped by language)."""
    event = message_event("", **kwargs)
    message = event["event"]["message"]
    message["message_type"] = "post"
    message["content"] = json.dumps({"title": title, "content": paragraphs})
    return event


def test_p2p_message_is_one_thread_per_chat():
    msg = parse_message(message_event("hello", chat="oc_dm", message_id="om_9", event_id="ev-1"))
    conv = msg.conversation
    assert (conv.chat_id, conv.topic, conv.is_direct, conv.reply_to) == ("oc_dm", None, True, None)
    assert (msg.text, msg.sender.user_id, msg.is_mention) == ("hello", "ou_alice", True)
    assert msg.event_id == "message:om_9"  # deduplicated by message, not by delivery


def test_group_mention_starts_a_thread_at_its_message_and_replies_stay_in_it():
    top = parse_message(
        message_event("go", chat="oc_g", chat_type="group", message_id="om_7", mention_bot=True),
        bot_open_id="ou_bot",
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


def test_post_with_a_title_keeps_fences_links_and_images_and_drops_only_the_bot_mention():
    paragraphs = [  # shaped as Feishu's "接收消息内容结构" example for post
        [{"tag": "img", "image_key": "img_v2_041b28e3", "width": 300, "height": 300}],
        [
            {"tag": "at", "user_id": "@_user_1", "user_name": "clarigate", "style": []},
            {"tag": "text", "text": " deploy with ", "style": ["bold"]},
            {"tag": "a", "href": "https://x", "text": "the docs", "style": []},
        ],
        [{"tag": "code_block", "language": "GO", "text": "func main() int64 {\n    return 0\n}\n"}],
    ]
    msg = parse_message(post_event(paragraphs, title="Release", mention_bot=True), bot_open_id="ou_bot")
    assert (
        msg.text
        == "Release\ndeploy with [the docs](https://x)\n\n```go\nfunc main() int64 {\n    return 0\n}\n```"
    )
    [image] = msg.attachments
    assert (image.kind, image.ref) == ("image", f"{msg.message_id}/image/img_v2_041b28e3")


def test_the_leading_mention_of_another_person_stays():
    event = message_event("@_user_2 please review", chat="oc_g", chat_type="group", mention_bot=True)
    event["event"]["message"]["mentions"].append(
        {"key": "@_user_2", "id": {"open_id": "ou_bob"}, "name": "Bob"}
    )
    text = "@_user_2 please review @_user_1"
    event["event"]["message"]["content"] = json.dumps({"text": text})
    assert parse_message(event, bot_open_id="ou_bot").text == "@Bob please review"


@pytest.mark.parametrize(
    ("written", "read"),
    [
        ("@_user_2 @_user_1 please review this", "@Bob Li please review this"),
        ("please @_user_1 review @_user_2's change", "please review @Bob Li's change"),
        ("@_user_1 @_user_1 /cancel", "/cancel"),
        ("@_user_2\n@_user_1 review\nthis @_user_1", "@Bob Li\nreview\nthis"),
    ],
)
def test_only_the_bots_mention_goes_wherever_it_stands(written, read):
    event = message_event("", chat="oc_g", chat_type="group", mention_bot=True)
    message = event["event"]["message"]
    message["mentions"].append({"key": "@_user_2", "id": {"open_id": "ou_bob"}, "name": "Bob Li"})
    message["content"] = json.dumps({"text": written})
    assert parse_message(event, bot_open_id="ou_bot").text == read


def typed(message_type: str, content: dict, **kwargs) -> dict:
    """A message event of another type, with the content Feishu documents for it."""
    event = message_event("", **kwargs)
    event["event"]["message"].update(message_type=message_type, content=json.dumps(content))
    return event


@pytest.mark.parametrize(
    ("message_type", "content", "kind", "name", "resource"),
    [
        ("image", {"image_key": "img_v2_1"}, "image", "image", "image/img_v2_1"),
        ("file", {"file_key": "file_v2_1", "file_name": "报告.pdf"}, "file", "报告.pdf", "file/file_v2_1"),
        (
            "audio",
            {"file_key": "file_v2_2", "duration": 2000},
            "audio",
            "voice message (2 s)",
            "file/file_v2_2",
        ),
        (
            "media",
            {"file_key": "file_v2_3", "image_key": "img_v2_3", "file_name": "demo.mp4", "duration": 2000},
            "video",
            "demo.mp4",
            "file/file_v2_3",
        ),
        ("sticker", {"file_key": "v2_4"}, "sticker", "sticker", None),
        (
            "merge_forward",
            {"content": "Merged and Forwarded Message"},
            "other",
            "forwarded chat history",
            None,
        ),
        ("share_chat", {"chat_id": "oc_x"}, "other", "shared chat", None),
        (
            "location",
            {"name": "Tiananmen", "longitude": "116.397", "latitude": "39.903"},
            "other",
            "location Tiananmen",
            None,
        ),
    ],
)
def test_every_message_type_reaches_the_agent(message_type, content, kind, name, resource):
    msg = parse_message(typed(message_type, content, message_id="om_5"))
    [attachment] = msg.attachments
    assert (attachment.kind, attachment.name) == (kind, name)
    assert attachment.ref == (f"om_5/{resource}" if resource else "")


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
    assert text == "ask @P2 @P3 @P4 @P5 @P6 @P7 @P8 @P9 @P10 @P11"
