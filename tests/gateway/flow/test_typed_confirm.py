"""Typed answers to a risk confirmation: a go-ahead option picked by number or label is asked
again ("Reply “confirm” …") and answers only with the same person's "confirm"; anything else
leaves the question open; the safe choice answers at once. Approvals' Approve too."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import HumanInputRequest, Option
from clarigate.gateway.store.base import Store

DELETE = "Yes, delete everything"
LAYOUTS = {
    "first": [DELETE, "No, keep it"],
    "middle": ["Keep it", DELETE, "Cancel"],
    "last": ["No, keep it", DELETE],
}
ASK = "Reply “confirm” to go ahead with “Yes, delete everything”; anything else keeps the question open."


def risk(labels: list[str]) -> HumanInputRequest:
    return HumanInputRequest(
        request_id="clarification:wipe",
        tool_call_id="wipe",
        clarification_type="risk_confirmation",
        question="Delete the test data?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)],
    )


def asks(request: HumanInputRequest):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("clean"):
            return asking(request)
        return TurnOutput(replies=[f"ran with: {turn.response.value if turn.response else turn.text}"])

    return script


def answers(runner: ScriptedRunner) -> list[str]:
    return [c.response.value for c in runner.calls if c.response is not None]


@pytest.mark.parametrize("layout", LAYOUTS)
async def test_a_typed_number_of_the_go_ahead_option_asks_and_confirm_answers(
    store: Store, make_gateway, layout
):
    runner = ScriptedRunner(asks(risk(LAYOUTS[layout])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()

    await chat.reply(str(LAYOUTS[layout].index(DELETE) + 1))
    await gateway.drain()
    assert chat.texts()[-1] == ASK and answers(runner) == []
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view is not None and view.status == "pending"

    await chat.reply("Confirm")
    await gateway.drain()
    assert answers(runner) == [DELETE] and chat.texts()[-1] == f"ran with: {DELETE}"


async def test_anything_else_leaves_the_question_open(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()
    await chat.reply(DELETE)  # the label works like the number
    await gateway.drain()
    assert chat.texts()[-1] == ASK

    await chat.reply("hmm, which data exactly?")
    await gateway.drain()
    assert (
        chat.texts()[-1]
        == "Not confirmed, so “Yes, delete everything” was not chosen; the question is still open."
    )
    await chat.reply("confirm")  # the confirmation was dropped: this confirms nothing
    await gateway.drain()
    assert chat.texts()[-1].startswith("There is nothing of yours to confirm")
    assert answers(runner) == [] and len(runner.calls) == 1  # nothing ran, nothing closed
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view is not None and view.status == "pending"

    await chat.reply("1")  # the safe choice: at once
    await gateway.drain()
    assert answers(runner) == ["No, keep it"]


async def test_another_persons_confirm_does_not_count(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    gateway, chat = await make_gateway(store, runner, answer_policy="anyone")
    await chat.say("clean up the test data", user="u1")
    await gateway.drain()
    await chat.say("2", user="u1")
    await gateway.drain()

    await chat.say("confirm", user="u2")
    await gateway.drain()
    assert answers(runner) == [] and chat.texts()[-1].startswith("There is nothing of yours to confirm")
    await chat.say("confirm", user="u1")  # u2's message did not drop u1's confirmation
    await gateway.drain()
    assert answers(runner) == [DELETE] and runner.calls[-1].response.answered_by.user_id == "u1"


async def test_the_confirmation_survives_a_restart(redis_stores, make_gateway):
    store = redis_stores()
    first_runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    first, chat = await make_gateway(store, first_runner)
    await chat.say("clean up the test data")
    await first.drain()
    await chat.reply("2")
    await first.drain()
    await first.stop(grace=0)

    second_runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    second, chat_again = await make_gateway(redis_stores(store.prefix), second_runner)
    await chat_again.say("confirm")
    await second.drain()
    assert answers(second_runner) == [DELETE]


async def test_a_typed_approve_needs_confirm_and_reject_answers_at_once(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data", "limit": 100}, ("approve", "edit", "reject"))
    runner = ScriptedRunner(asks(approval_request("i1", [action], "en")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()

    await chat.reply("approve")
    await gateway.drain()
    assert chat.texts()[-1] == (
        "Reply “confirm” to go ahead with “Approve”; anything else keeps the question open."
    )
    assert answers(runner) == []
    await chat.reply("confirm")
    await gateway.drain()
    assert answers(runner) == ["Approve"]


async def test_a_typed_reject_of_an_approval_answers_at_once(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "reject"))
    runner = ScriptedRunner(asks(approval_request("i2", [action], "zh")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()
    await chat.reply("拒绝")
    await gateway.drain()
    assert answers(runner) == ["拒绝"]
    await chat.reply("2")
    await gateway.drain()
    assert len(runner.calls) == 3  # a new request now: the question was answered


async def test_a_typed_approve_in_chinese_asks_in_chinese(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "reject"))
    runner = ScriptedRunner(asks(approval_request("i3", [action], "zh")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()
    await chat.reply("1")
    await gateway.drain()
    assert chat.texts()[-1] == "回复「确认」以执行「批准」；回复其他内容则问题保持未答。"
    await chat.reply("确认")
    await gateway.drain()
    assert answers(runner) == ["批准"]


CONFIRM_LINE = {
    "en": "Reply “confirm” to go ahead with “Approve”; anything else keeps the question open.",
    "zh": "回复「确认」以执行「批准」；回复其他内容则问题保持未答。",
}


@pytest.mark.parametrize(
    ("locale", "typed", "confirm"), [("en", "批准", "confirm"), ("zh", "Approve.", "确认")]
)
async def test_a_typed_approve_in_the_other_language_asks_for_confirm_too(
    store: Store, make_gateway, locale, typed, confirm
):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "reject"))
    runner = ScriptedRunner(asks(approval_request("i4", [action], locale)))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()

    await chat.reply(typed)  # the approve word of the other language: the same confirmation step
    await gateway.drain()
    assert chat.texts()[-1] == CONFIRM_LINE[locale] and answers(runner) == []
    view = await gateway.pending_by_token(chat.last_request().token)
    assert view is not None and view.status == "pending"  # nothing decided yet

    await chat.reply(confirm)
    await gateway.drain()
    assert answers(runner) == [action_label(locale)]


def action_label(locale: str) -> str:
    return {"en": "Approve", "zh": "批准"}[locale]
