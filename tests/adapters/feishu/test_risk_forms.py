"""A risk confirmation asked as a form on Feishu: the card form's Submit asks "Are you sure?" first
(a go-ahead value may already be filled in, a checkbox shown ticked: Submit alone would answer it
in one click), as a risk card's go-ahead buttons do; a form that is no risk confirmation submits at
once. Typed in the chat, "yes" to its checkbox asks for "confirm" (确认) before it counts. A
checkbox without a default whose untouched "no" goes ahead ("Keep the backups") is a Yes / No
select to pick, refused untouched. Real
lark-oapi against the fake open API, the real core."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from .cards import button, components, payload, text_of
from .events import card_action, message_event
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


async def test_a_risk_forms_box_whose_untouched_no_goes_ahead_must_be_picked(make_bot: Any) -> None:
    # "Keep the backups" left unticked says "do not keep them": a checker would answer so
    keep = {"name": "keep", "label": "Keep the backups", "type": "checkbox"}
    question = {"question": "Clean up?", "clarification_type": "risk_confirmation", "fields": [keep]}

    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        return asking(normalize_request(question, "call-clean"))

    bot = await make_bot(ScriptedRunner(script))
    message_id, card = await ask(bot, "clean up")
    assert components(card, "checker") == []
    [box] = components(card, "select_static")
    assert box["required"] is True and "initial_option" not in box
    options = {o["text"]["content"]: o["value"] for o in box["options"]}
    assert list(options) == ["Yes", "No"]
    submit = payload(button(card, "Submit"))

    refused = await bot.click(card_action(submit, tag="button", form_value={}, message_id=message_id))
    await bot.gateway.drain()
    assert refused["toast"] == {"type": "error", "content": "Keep the backups: This field is required"}
    assert [c.response for c in bot.runner.calls if c.response] == []  # the backups were kept

    picked = card_action(submit, tag="button", form_value={"f1": options["No"]}, message_id=message_id)
    await bot.click(picked)
    await bot.gateway.drain()
    assert [c.response.values for c in bot.runner.calls if c.response] == [{"keep": False}]


async def test_a_risk_forms_box_whose_untouched_no_is_safe_stays_a_checker(make_bot: Any) -> None:
    keep = {"name": "wipe", "label": "Delete the backups", "type": "checkbox"}
    question = {"question": "Clean up?", "clarification_type": "risk_confirmation", "fields": [keep]}
    bot = await make_bot(ScriptedRunner(lambda turn: asking(normalize_request(question, "call-clean"))))
    _, card = await ask(bot, "clean up")
    [box] = components(card, "checker")
    assert box["checked"] is False and components(card, "select_static") == []
