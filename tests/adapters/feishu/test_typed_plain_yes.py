"""A plain "yes" typed on Feishu to a risk confirmation ("yes", "是", "好的") goes through the
core's typed confirmation: it picks the one go-ahead option and asks for "confirm" (确认); it is
never handed to the agent as a request right after its destructive question, and the question
stays open until the person confirms."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from .cards import is_interactive, text_of
from .events import message_event
from .test_scenarios import ask

RISK = {
    "en": {"question": "Delete the 3 prod tables?", "options": ["Delete them", "Keep them"]},
    "zh": {"question": "删除三张生产表？", "options": ["删除", "保留"]},
}
ASKED = {
    "en": "Reply “confirm” to go ahead with “Delete them”",
    "zh": "回复「确认」以执行「删除」",
}


def risky(locale: str):
    def script(turn):
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.value}"])
        if turn.text == "tidy up":
            args = {**RISK[locale], "clarification_type": "risk_confirmation"}
            return asking(normalize_request(args, "call-risk"))
        return TurnOutput(replies=[f"request: {turn.text}"])

    return script


@pytest.mark.parametrize(("locale", "typed"), [("en", "yes"), ("zh", "是"), ("zh", "好的")])
async def test_a_typed_yes_asks_for_confirm_and_keeps_the_question_open(make_bot, locale, typed):
    bot = await make_bot(ScriptedRunner(risky(locale)))
    question_id, _ = await ask(bot, "tidy up")
    await bot.deliver(message_event(typed))
    await bot.gateway.drain()

    assert [c.text for c in bot.runner.calls[1:]] == []  # no "yes" handed over without "confirm"
    assert is_interactive(bot.api.cards[question_id]), text_of(bot.api.cards[question_id])
    assert ASKED[locale] in text_of(bot.api.shown()[-1])

    await bot.deliver(message_event("确认" if locale == "zh" else "confirm"))
    await bot.gateway.drain()
    assert [c.response.value for c in bot.runner.calls if c.response] == [RISK[locale]["options"][0]]
