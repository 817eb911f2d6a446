"""Updates as deep as the Bot API documents them are read; messages nested past that are refused.

A user in an entity of the message a question replies to (a ``text_mention`` of someone without a
username: https://core.telegram.org/bots/api#messageentity) sits four objects deep in a tap's
update; Telegram sends it, so the tap is answered. What Telegram never sends, a reply inside a
reply inside a reply…, stays a bad request.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.protocol import catalog

from .fake_bot_api import BOT_USER
from .harness import ALICE, GROUP, bot_message, callback_update, mention_update, message_update
from .test_choices import ask_then_echo, clarification_call

# a full User (https://core.telegram.org/bots/api#user), without a username: named by text_mention
CAROL = {"id": 333, "is_bot": False, "first_name": "Carol", "last_name": "Ng", "language_code": "de"}


def text_mention(offset: int, length: int) -> dict[str, Any]:
    return {"type": "text_mention", "offset": offset, "length": length, "user": CAROL}


def carols_message(chat: dict[str, Any] = GROUP, **fields: Any) -> dict[str, Any]:
    """Alice's message naming Carol by a text mention, with its caption's too when it has one."""
    message = {
        "message_id": 41,
        "date": int(time.time()),
        "chat": chat,
        "from": ALICE,
        "text": "ask Carol",
        "entities": [{"type": "bold", "offset": 0, "length": 3}, text_mention(4, 5)],
    }
    message.update(fields)
    return message


def photo_of_carol(chat: dict[str, Any]) -> dict[str, Any]:
    """A photo whose caption names Carol by a text mention (``caption_entities``)."""
    photo = [{"file_id": "AgAD1", "file_unique_id": "u1", "width": 90, "height": 90, "file_size": 900}]
    message = carols_message(chat, photo=photo, caption="Carol here", caption_entities=[text_mention(0, 5)])
    del message["text"], message["entities"]
    return message


def pin_notice(chat: dict[str, Any]) -> dict[str, Any]:
    """The service message "Alice pinned …", with the pinned message in it."""
    return {
        "message_id": 42,
        "date": int(time.time()),
        "chat": chat,
        "from": ALICE,
        "pinned_message": carols_message(chat, reply_markup=KEYBOARD),
    }


KEYBOARD = {
    "inline_keyboard": [
        [{"text": "Yes", "callback_data": "y"}, {"text": "No", "callback_data": "n"}],
        [{"text": "Docs", "url": "https://example.com/docs"}],
        [{"text": "Copy", "copy_text": {"text": "v1.2"}}],
    ]
}


async def test_a_tap_on_a_question_replying_to_a_text_mention_is_answered_once(bench):
    """In a group the tapped question replies to Alice's message, whose text names Carol (no
    username): the tap's update holds ``callback_query.message.reply_to_message.entities[].user``."""
    runner = ScriptedRunner(ask_then_echo(choice_request("Which framework?", ["React", "Vue"])))
    tg = await bench(runner)
    handle = f"@{BOT_USER['username']}"
    asking = mention_update("deploy for Carol", chat=GROUP)
    asking["message"]["entities"].append(text_mention(len(handle) + 12, 5))
    await tg.deliver(asking)
    asked = clarification_call(tg)
    vue = asked.buttons[0][1]["callback_data"]

    tap = callback_update(vue, asked.result["message_id"], chat=GROUP)
    # the question as Telegram shows it in the tap: its keyboard, and the message it replies to
    shown = tap["callback_query"]["message"]
    shown.update(asked.result, reply_markup=asked.markup, reply_to_message=asking["message"])
    response = await tg.post(tap)
    await tg.settle()
    assert response.status_code == 200, response.text
    assert [c.params["callback_query_id"] for c in tg.api.of("answerCallbackQuery")] == [
        tap["callback_query"]["id"]
    ]
    assert [c.response.option_id for c in runner.calls if c.response is not None] == ["option-2"]
    assert tg.api.of("sendMessage")[-1].params["text"] == "Going with <b>Vue</b>."


def documented(chat: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Message fields the Bot API sends, each nesting a user as deep as it documents."""
    origin = {"type": "user", "date": int(time.time()) - 60, "sender_user": CAROL}
    return {
        "a reply to a text mention": {"reply_to_message": carols_message(chat)},
        "a reply to a captioned photo": {"reply_to_message": photo_of_carol(chat)},
        "a quote of a text mention": {
            "reply_to_message": carols_message(chat),
            "quote": {"text": "Carol", "entities": [text_mention(0, 5)], "position": 4, "is_manual": True},
        },
        "a reply to another chat's message": {
            "external_reply": {
                "origin": origin,
                "chat": {"id": -100777, "type": "channel", "title": "News"},
                "message_id": 9,
                "photo": photo_of_carol(chat)["photo"],
            },
            "quote": {"text": "Carol here", "entities": [text_mention(0, 5)], "position": 0},
        },
        "a reply to a pin notice": {"reply_to_message": pin_notice(chat)},
        "a reply to a message with buttons": {
            "reply_to_message": carols_message(chat, reply_markup=KEYBOARD)
        },
    }


@pytest.mark.parametrize("case", documented(GROUP).keys())
async def test_a_message_to_the_bot_as_deep_as_documented_reaches_the_agent(bench, case: str):
    runner = ScriptedRunner()
    tg = await bench(runner)
    update = mention_update("hello", chat=GROUP, **documented(GROUP)[case])
    await tg.deliver(update)
    # (a reply to another chat's message comes with what it answers: ``media._replied_elsewhere``)
    assert [c.text.split("\n\n(attached: ")[0] for c in runner.calls] == ["hello"]


@pytest.mark.parametrize("case", documented(GROUP).keys())
async def test_a_tap_on_a_message_as_deep_as_documented_is_answered(bench, case: str):
    """The tapped message carries the field, a level deeper than a message does: a tap on a
    question no longer open, answered so (and not refused, which would lose it)."""
    runner = ScriptedRunner()
    tg = await bench(runner)
    tap = callback_update("t|o1", 1000, chat=GROUP)
    tap["callback_query"]["message"].update(documented(GROUP)[case], reply_markup=KEYBOARD)
    await tg.deliver(tap)
    [answer] = tg.api.of("answerCallbackQuery")
    assert answer.params["callback_query_id"] == tap["callback_query"]["id"]
    assert answer.params["text"] == catalog.text("expired")
    assert runner.calls == []


async def test_a_pin_notice_is_read_and_not_for_the_bot(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    notice = message_update(None, chat=GROUP)
    notice["message"] = pin_notice(GROUP)
    await tg.deliver(notice)
    inaccessible = {"chat": GROUP, "message_id": 7, "date": 0}  # a pinned message the bot can't see
    await tg.deliver(message_update(None, chat=GROUP, pinned_message=inaccessible))
    assert runner.calls == [] and tg.api.of("sendMessage") == []


def nested(times: int, field: str, inner: dict[str, Any]) -> dict[str, Any]:
    """``inner`` inside ``times`` messages, each holding the next in ``field``."""
    for n in range(times):
        outer = bot_message(100 + n, GROUP)
        outer[field] = inner
        inner = outer
    return inner


ABUSIVE = {
    "a reply to a reply to a reply": lambda: mention_update(
        "hello", chat=GROUP, reply_to_message=nested(2, "reply_to_message", carols_message())
    ),
    "a pin of a pin of a pin": lambda: mention_update(
        "hello", chat=GROUP, pinned_message=nested(2, "pinned_message", carols_message())
    ),
    "three hundred pins deep": lambda: mention_update(
        "hello", chat=GROUP, pinned_message=nested(300, "pinned_message", carols_message())
    ),
    "a tap on a reply to a reply to a reply": lambda: tap_on(nested(3, "reply_to_message", carols_message())),
}


def tap_on(message: dict[str, Any]) -> dict[str, Any]:
    tap = callback_update("t|o1", message["message_id"], chat=GROUP)
    tap["callback_query"]["message"] = message
    return tap


@pytest.mark.parametrize("make", ABUSIVE.values(), ids=ABUSIVE.keys())
async def test_messages_nested_past_what_telegram_sends_are_refused(bench, make):
    runner = ScriptedRunner()
    tg = await bench(runner)
    response = await tg.post(make())
    await tg.gateway.drain()
    assert response.status_code == 400
    assert "nested too deep" in response.json()["error"]
    assert runner.calls == [] and tg.api.of("answerCallbackQuery") == [] and tg.api.of("sendMessage") == []
