"""A sticker, a place, a shared chat or a forward sent alone over the person's open question
neither answers nor closes it: they are told it is still open, in its language, the agent does not
run, and its card still answers it. With no question open it goes to the agent as before."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from .cards import button, is_interactive, payload, text_of
from .events import card_action, message_event

FRAMEWORK = choice_request("Which framework?", ["React", "Vue"])
FRAMEWORK_ZH = choice_request("用哪个框架？", ["React", "Vue"]).model_copy(update={"locale": "zh"})
STILL_OPEN = "The question “{}” is still open, so I set that message aside: please answer it first."

#: ``im.message.receive_v1`` contents as Feishu documents them ("接收消息内容结构").
SENT_ALONE: dict[str, dict[str, Any]] = {
    "sticker": {"file_key": "v2_b9a1c7f2-sticker"},
    "location": {"name": "Tiananmen", "longitude": "116.397", "latitude": "39.903"},
    "share_chat": {"chat_id": "oc_shared"},
    "share_user": {"user_id": "ou_carol"},
    "merge_forward": {"content": "Merged and Forwarded Message"},
}


def script(turn: Turn) -> TurnOutput:
    """``deploy``/``部署`` asks which framework; anything else says what the agent got."""
    if turn.response is None and ("deploy" in turn.text or "部署" in turn.text):
        return asking(FRAMEWORK_ZH if "部署" in turn.text else FRAMEWORK)
    return TurnOutput(replies=[f"Got: {turn.response.value if turn.response else turn.text}"])


def sent_alone(message_type: str) -> dict[str, Any]:
    """A message of ``message_type`` with nothing else in it, in Alice's p2p chat."""
    event = message_event("")
    content = json.dumps(SENT_ALONE[message_type])
    event["event"]["message"].update(message_type=message_type, content=content)
    return event


async def asked(make_bot, request: str) -> Any:
    bot = await make_bot(ScriptedRunner(script))
    await bot.deliver(message_event(request))
    await bot.gateway.drain()
    return bot


def question_card(bot, question: str) -> dict[str, Any]:
    return next(card for card in bot.api.shown() if question in text_of(card))


@pytest.mark.parametrize("message_type", sorted(SENT_ALONE))
async def test_sent_alone_while_a_question_is_open_it_stays_open_and_the_person_is_told(
    make_bot, message_type
):
    bot = await asked(make_bot, "deploy the app")
    shown = len(bot.api.shown())

    await bot.deliver(sent_alone(message_type))
    await bot.gateway.drain()

    told = [text_of(card) for card in bot.api.shown()[shown:]]
    assert told == [STILL_OPEN.format("Which framework?")]
    assert is_interactive(question_card(bot, "Which framework?"))  # not closed as superseded
    assert len(bot.runner.calls) == 1  # the agent saw nothing of it
    pending = await bot.gateway.store.pending_for_thread(bot.runner.calls[0].thread_id)
    assert pending is not None and pending.status == "pending"

    vue = payload(button(question_card(bot, "Which framework?"), "Vue"))
    reply = await bot.click(card_action(vue))  # the question still takes its answer
    await bot.gateway.drain()
    assert reply["toast"]["content"] == "Answer received."
    assert bot.runner.calls[-1].response is not None and bot.runner.calls[-1].response.value == "Vue"


async def test_a_sticker_under_a_chinese_question_is_answered_in_chinese(make_bot):
    bot = await asked(make_bot, "部署应用")
    shown = len(bot.api.shown())

    await bot.deliver(sent_alone("sticker"))
    await bot.gateway.drain()

    told = [text_of(card) for card in bot.api.shown()[shown:]]
    assert told == ["问题「用哪个框架？」仍在等待回答，因此这条消息未作处理：请先回答该问题。"]
    assert len(bot.runner.calls) == 1


async def test_a_place_with_no_question_open_goes_to_the_agent(make_bot):
    bot = await make_bot(ScriptedRunner(script))

    await bot.deliver(sent_alone("location"))
    await bot.gateway.drain()

    assert [c.text for c in bot.runner.calls] == ["(attached: location Tiananmen)"]
