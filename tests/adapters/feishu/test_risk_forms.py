"""A risk confirmation asked as a form on Feishu: the card form's Submit asks "Are you sure?" first
(a go-ahead value may already be filled in, a checkbox shown ticked: Submit alone would answer it
in one click), as a risk card's go-ahead buttons do; a form that is no risk confirmation submits at
once. Typed in the chat, "yes" to its checkbox asks for "confirm" (确认) before it counts. A
checkbox without a default whose untouched "no" goes ahead ("Keep the backups") is a Yes / No
select to pick, refused untouched. A field whose default goes ahead (a box ticked, a select showing
"Drop all") is shown with nothing picked and required, a note naming what the agent proposed;
submitted untouched it is refused naming the field, picked it goes through; safe defaults and
other forms stay filled in. Real lark-oapi against the fake open API, the real core."""

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


GO_AHEAD = [
    FIELD,
    {"name": "mode", "type": "select", "options": ["Drop all", "Keep all"], "default": "Drop all"},
]


def asks_form(fields: list[dict[str, Any]], kind: str = "risk_confirmation"):
    question = {"question": "Delete the 3 prod tables?", "clarification_type": kind, "fields": fields}

    def script(turn: Turn) -> TurnOutput:
        if turn.response is not None:
            return TurnOutput(replies=[f"answer: {turn.response.values}"])
        return asking(normalize_request(question, "call-wipe"))

    return script


def notes_of(card: dict[str, Any]) -> str:
    return "\n".join(c["content"] for c in components(card, "markdown"))


async def test_a_risk_forms_go_ahead_defaults_show_unpicked_and_untouched_are_refused(make_bot: Any) -> None:
    # a box shown ticked, a select showing "Drop all": Submit (and "Are you sure?") alone would decide
    bot = await make_bot(ScriptedRunner(asks_form(GO_AHEAD)))
    message_id, card = await ask(bot, "tidy up")
    assert components(card, "checker") == []
    delete, mode = components(card, "select_static")
    assert [o["text"]["content"] for o in delete["options"]] == ["Yes", "No"]
    for shown in (delete, mode):
        assert shown["required"] is True and "initial_option" not in shown, shown
    notes = notes_of(card)
    assert "**Confirm delete** (required)" in notes and "**Mode** (required)" in notes
    assert "Proposed: Yes. Nothing is picked for you" in notes, notes
    assert "Proposed: Drop all. Nothing is picked for you" in notes, notes
    submit = payload(button(card, "Submit"))

    async def send(form_value: dict[str, Any]) -> dict[str, Any]:
        answered: dict[str, Any] = await bot.click(
            card_action(submit, tag="button", form_value=form_value, message_id=message_id)
        )
        await bot.gateway.drain()
        return answered

    for untouched in ({}, {"f1": "", "f2": ""}):
        refused = await send(untouched)
        said = "Confirm delete: This field is required; Mode: This field is required"
        assert refused["toast"] == {"type": "error", "content": said}, refused
    assert [c.response for c in bot.runner.calls if c.response] == []  # nothing dropped for them

    keep = next(o["value"] for o in mode["options"] if o["text"]["content"] == "Keep all")
    no = next(o["value"] for o in delete["options"] if o["text"]["content"] == "No")
    ok = await send({"f1": no, "f2": keep})
    assert ok["toast"]["type"] == "success", ok
    assert [c.response.values for c in bot.runner.calls if c.response] == [
        {"confirm_delete": False, "mode": "Keep all"}
    ]


async def test_a_risk_forms_safe_defaults_and_other_forms_stay_filled_in(make_bot: Any) -> None:
    safe = [
        {"name": "keep", "label": "Keep the backups", "type": "checkbox", "default": True},
        {"name": "mode", "type": "select", "options": ["Drop all", "Keep all"], "default": "Keep all"},
    ]
    for fields, kind in ((safe, "risk_confirmation"), (GO_AHEAD, "missing_info")):
        bot = await make_bot(ScriptedRunner(asks_form(fields, kind)))
        _, card = await ask(bot, "tidy up")
        [box] = components(card, "checker")
        [mode] = components(card, "select_static")
        assert box["checked"] is True and "initial_option" in mode, kind
        assert "Proposed" not in notes_of(card)
