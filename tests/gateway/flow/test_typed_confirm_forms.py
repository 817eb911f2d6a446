"""A risk confirmation asked as a form (a one-field form of a checkbox or a select, as a typed
interrupt's ``response_schema`` or ``ask_clarification`` with fields asks it): a typed answer that
goes ahead (a checkbox's yes, a select's go-ahead option, by number, label or a plain "yes") asks
"Reply “confirm” …" first, as a typed option pick does, and answers only with that person's
"confirm"; the safe answer (no, the keep option) answers at once. Before, "yes" or "1" answered at
once: form fields had no go-ahead roles."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request
from clarigate.gateway.store.base import Store


def risk_form(field: dict[str, Any], question: str = "Delete the 3 prod tables?") -> dict[str, Any]:
    return {"question": question, "clarification_type": "risk_confirmation", "fields": [field]}


CHECKBOX = risk_form({"name": "confirm_delete", "type": "checkbox", "required": True})
SELECT = risk_form({"name": "action", "type": "select", "options": ["Delete all rows", "Keep them"]})


def asks(args: dict[str, Any]):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("tidy"):
            return asking(normalize_request(args, "wipe"))
        return TurnOutput(replies=[f"ran with: {turn.response.values if turn.response else turn.text}"])

    return script


def answered(runner: ScriptedRunner) -> list[Any]:
    return [c.response.values for c in runner.calls if c.response is not None]


async def still_open(gateway, chat) -> bool:
    view = await gateway.pending_by_token(chat.last_request().token)
    return view is not None and view.status == "pending"


def ask_line(option: str) -> str:
    return f"Reply “confirm” to go ahead with “{option}”; anything else keeps the question open."


@pytest.mark.parametrize("typed", ["yes", "1", "true", "Yes!"])
async def test_a_typed_yes_to_a_checkbox_risk_form_asks_for_confirm_first(
    store: Store, make_gateway, typed: str
):
    runner = ScriptedRunner(asks(CHECKBOX))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply(typed)
    await gateway.drain()
    assert chat.texts()[-1] == ask_line("Confirm delete: yes")
    assert len(runner.calls) == 1 and await still_open(gateway, chat)  # nothing ran, nothing closed

    await chat.reply("confirm")
    await gateway.drain()
    assert answered(runner) == [{"confirm_delete": True}]


async def test_a_typed_no_to_a_checkbox_risk_form_answers_at_once(store: Store, make_gateway):
    runner = ScriptedRunner(asks(CHECKBOX))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("no")
    await gateway.drain()
    assert answered(runner) == [{"confirm_delete": False}]


async def test_a_checkbox_that_reads_safe_goes_ahead_when_it_is_unticked(store: Store, make_gateway):
    keep = risk_form({"name": "keep_backups", "label": "Keep the backups", "type": "checkbox"})
    runner = ScriptedRunner(asks(keep))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("no")
    await gateway.drain()
    assert chat.texts()[-1] == ask_line("Keep the backups: no") and len(runner.calls) == 1
    await chat.reply("keep_backups: yes")  # keeping them is the safe answer: at once
    await gateway.drain()
    assert answered(runner) == [{"keep_backups": True}]


@pytest.mark.parametrize("typed", ["1", "Delete all rows", "delete all rows!", "yes", "好的"])
async def test_picking_a_selects_go_ahead_option_asks_for_confirm_first(
    store: Store, make_gateway, typed: str
):
    runner = ScriptedRunner(asks(SELECT))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply(typed)
    await gateway.drain()
    asked = "回复「确认」以执行「Action：Delete all rows」；回复其他内容则问题保持未答。"
    assert chat.texts()[-1] in (ask_line("Action: Delete all rows"), asked)
    assert len(runner.calls) == 1 and await still_open(gateway, chat)

    await chat.reply("确认" if chat.texts()[-1] == asked else "Confirm")
    await gateway.drain()
    assert answered(runner) == [{"action": "Delete all rows"}]


async def test_the_selects_safe_option_answers_at_once_and_other_text_drops_the_pick(
    store: Store, make_gateway
):
    runner = ScriptedRunner(asks(SELECT))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("1")
    await gateway.drain()
    await chat.reply("hmm, which tables?")
    await gateway.drain()
    assert chat.texts()[-1] == (
        "Not confirmed, so “Action: Delete all rows” was not chosen; the question is still open."
    )
    await chat.reply("confirm")  # dropped: nothing to confirm
    await gateway.drain()
    assert chat.texts()[-1].startswith("There is nothing of yours to confirm")
    assert len(runner.calls) == 1 and await still_open(gateway, chat)

    await chat.reply("Keep them")
    await gateway.drain()
    assert answered(runner) == [{"action": "Keep them"}]


async def test_someone_elses_confirm_does_not_answer_a_form(store: Store, make_gateway):
    runner = ScriptedRunner(asks(CHECKBOX))
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("tidy up", user="u1")
    await gateway.drain()
    await chat.say("yes", user="u1")
    await gateway.drain()
    await chat.say("confirm", user="u2")
    await gateway.drain()
    assert len(runner.calls) == 1 and chat.texts()[-1].startswith("There is nothing of yours to confirm")
    await chat.say("confirm", user="u1")
    await gateway.drain()
    assert answered(runner) == [{"confirm_delete": True}]
    assert runner.calls[-1].response.answered_by.user_id == "u1"


async def test_a_risk_form_typed_as_lines_asks_first_too(store: Store, make_gateway):
    two = {
        **CHECKBOX,
        "fields": [
            {"name": "confirm_delete", "type": "checkbox", "required": True},
            {"name": "reason", "type": "text"},
        ],
    }
    runner = ScriptedRunner(asks(two))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("confirm_delete: yes\nreason: stale data")
    await gateway.drain()
    assert chat.texts()[-1] == ask_line("Confirm delete: yes; Reason: stale data")
    await chat.reply("confirm")
    await gateway.drain()
    assert answered(runner) == [{"confirm_delete": True, "reason": "stale data"}]


async def test_a_form_that_is_no_risk_confirmation_answers_at_once(store: Store, make_gateway):
    runner = ScriptedRunner(asks({**CHECKBOX, "clarification_type": "missing_info"}))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("yes")
    await gateway.drain()
    assert answered(runner) == [{"confirm_delete": True}]
