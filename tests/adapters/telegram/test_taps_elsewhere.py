"""A question's button payload counts only on a message of the question's own conversation.

Someone who got hold of a question's callback data (a forwarded screenshot, a buggy client)
could send it from a message of another chat, or another topic of the same forum: Telegram
names the message tapped in ``callback_query.message``, and every edit after a tap goes there.
Such a tap is answered with the "expired" alert and changes nothing: no answer, no edit, in
either chat. A tap in the supergroup a group was upgraded to still counts
(``test_upgraded_group``). The adapter offers no inline mode: a tap on an inline message
(``inline_message_id``, no ``message``) is answered and answers nothing.
"""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request

from .harness import ALICE, GROUP, callback_update, mention_update, message_update
from .test_choices import ask_then_echo, clarification_call

EXPIRED = "This question has expired; send your request again."
ELSEWHERE = {"id": -100777, "type": "supergroup", "title": "Elsewhere"}


def script():
    return ask_then_echo(choice_request("Which framework?", ["React", "Vue"]))


def told(tg) -> dict:
    return tg.api.of("answerCallbackQuery")[-1].params


@pytest.mark.parametrize("button", [1, 2, 3], ids=["option", "other", "cancel"])
async def test_a_tap_from_another_chat_is_refused_and_edits_nothing(bench, button):
    runner = ScriptedRunner(script())
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the app"))  # asked in Alice's private chat
    asked = clarification_call(tg)
    data = [b["callback_data"] for row in asked.buttons for b in row][button]
    tg.new_calls()

    # the same payload on a message of the bot's in another chat
    await tg.deliver(callback_update(data, 55, ALICE, ELSEWHERE))
    await tg.settle()

    calls = tg.new_calls()
    assert [c.method for c in calls] == ["answerCallbackQuery"], calls  # no edit, no post anywhere
    assert told(tg)["text"] == EXPIRED and told(tg)["show_alert"] == "true"
    assert all(c.response is None for c in runner.calls)  # the question is still open
    assert "Which framework?" in (tg.api.shown(ALICE["id"], asked.result["message_id"]) or "")

    await tg.deliver(callback_update(data, asked.result["message_id"]))  # in its own chat: it counts
    await tg.settle()
    assert told(tg).get("show_alert") != "true"


async def test_a_tap_from_another_topic_of_the_forum_is_refused(bench):
    runner = ScriptedRunner(script())
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy the app", thread_id=77))
    asked = clarification_call(tg)
    vue = asked.buttons[0][1]["callback_data"]
    question_id = asked.result["message_id"]
    tg.new_calls()

    await tg.deliver(callback_update(vue, question_id + 5, ALICE, GROUP, thread_id=88))
    await tg.settle()
    assert [c.method for c in tg.new_calls()] == ["answerCallbackQuery"]
    assert told(tg)["text"] == EXPIRED and told(tg)["show_alert"] == "true"
    assert all(c.response is None for c in runner.calls)

    await tg.deliver(callback_update(vue, question_id, ALICE, GROUP, thread_id=77))
    await tg.settle()
    assert runner.calls[-1].response is not None and runner.calls[-1].response.value == "Vue"
    assert "Answered" in (tg.api.shown(GROUP["id"], question_id) or "")


async def test_a_tap_on_an_inline_message_is_answered_and_changes_nothing(bench):
    runner = ScriptedRunner(script())
    tg = await bench(runner)
    await tg.deliver(message_update("deploy the app"))
    vue = clarification_call(tg).buttons[0][1]["callback_data"]
    tg.new_calls()
    inline = callback_update(vue, 1)
    query = inline["callback_query"]
    del query["message"]  # a message sent in inline mode: Telegram names it by id only
    query["inline_message_id"] = "AAAAAQ-inline"
    await tg.deliver(inline)
    await tg.settle()
    assert [c.method for c in tg.new_calls()] == ["answerCallbackQuery"]
    assert "show_alert" not in told(tg) or told(tg)["show_alert"] != "true"
    assert all(c.response is None for c in runner.calls)
