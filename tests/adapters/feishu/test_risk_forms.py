"""A risk confirmation asked as a form on Feishu: the card form's Submit asks "Are you sure?" first
(a go-ahead value may already be filled in, a checkbox shown ticked: Submit alone would answer it
in one click), as a risk card's go-ahead buttons do; a form that is no risk confirmation submits at
once. Typed in the chat, "yes" to its checkbox asks for "confirm" (确认) before it counts. Real
lark-oapi against the fake open API, the real core."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from .cards import button, text_of
from .events import message_event
from .test_scenarios import ask

FIELD = {"name": "confirm_delete", "type": "checkbox", "default": True}
QUESTION = {"question": "Delete the 3 prod tables?", "fields": [FIELD]}


def agent(kind: str):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        return asking(normalize_request({**QUESTION, "clarification_type": kind}, "call-wipe"))

    return script


@pytest.mark.parametrize(
    ("kind", "dialog"),
    [
        ("risk_confirmation", {"title": "Are you sure?", "text": "This action may not be reversible."}),
        ("missing_info", None),
    ],
)
async def test_a_risk_forms_submit_asks_are_you_sure_first(make_bot: Any, kind: str, dialog: Any) -> None:
    bot = await make_bot(ScriptedRunner(agent(kind)))
    _, card = await ask(bot, "tidy up")
    submit = button(card, "Submit")
    shown = submit.get("confirm")
    assert (shown and {k: v["content"] for k, v in shown.items()}) == (dialog or None)


async def test_a_typed_yes_to_a_risk_form_asks_for_confirm(make_bot: Any) -> None:
    bot = await make_bot(ScriptedRunner(agent("risk_confirmation")))
    await ask(bot, "tidy up")
    await bot.deliver(message_event("yes"))
    await bot.gateway.drain()
    assert len(bot.runner.calls) == 1  # not answered, not run as a request
    said = text_of(bot.api.shown()[-1])
    assert "Reply “confirm” to go ahead with “Confirm delete: yes”" in said, said

    await bot.deliver(message_event("confirm"))
    await bot.gateway.drain()
    assert [c.response.values for c in bot.runner.calls if c.response] == [{"confirm_delete": True}]
