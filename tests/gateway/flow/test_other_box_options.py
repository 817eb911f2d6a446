"""Text typed in a platform's "Other…" box that names an option exactly (its label or value, case
aside; not its number: "2" written there for "How many?" means two) is that option: the agent
gets the pick (a graph its option's value), not the text; a go-ahead option of a risk
confirmation is refused there with the line asking for "confirm", and "confirm" (in the box or
the chat) answers with it. Anything else stays free text. Before, the box's text was always
free text: "Yes, delete everything" reached the agent as the person's answer with no
confirmation."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.interrupts import Action, approval_request
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.store.base import Store
from tests.gateway.flow.test_typed_confirm import ASK, CONFIRM_LINE, DELETE, LAYOUTS, asks, risk


def picks(runner: ScriptedRunner) -> list[tuple[str, str | None, str]]:
    return [
        (c.response.response_kind, c.response.option_id, c.response.value)
        for c in runner.calls
        if c.response is not None
    ]


async def still_open(gateway, chat) -> bool:
    view = await gateway.pending_by_token(chat.last_request().token)
    return view is not None and view.status == "pending"


async def test_a_go_ahead_label_in_the_other_box_asks_for_confirm_first(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()

    outcome = await chat.answer_text(DELETE)
    await gateway.drain()
    assert (outcome.status, outcome.message) == (AnswerStatus.INVALID, ASK)
    assert len(runner.calls) == 1 and await still_open(gateway, chat)  # nothing reached the agent

    outcome = await chat.answer_text("confirm")  # typed in the box again
    await gateway.drain()
    assert outcome.accepted and picks(runner) == [("option", "option-2", DELETE)]


async def test_a_pick_in_the_other_box_is_confirmed_in_the_chat_too(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()
    outcome = await chat.answer_text(DELETE.upper())
    assert outcome.message == ASK
    await chat.reply("confirm")
    await gateway.drain()
    assert picks(runner) == [("option", "option-2", DELETE)]


async def test_the_safe_choice_in_the_other_box_answers_at_once(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(LAYOUTS["last"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()
    outcome = await chat.answer_text("no, keep it")
    await gateway.drain()
    assert outcome.accepted and picks(runner) == [("option", "option-1", "No, keep it")]


@pytest.mark.parametrize(
    ("typed", "answer"),
    [
        ("mysql", ("option", "option-2", "MySQL")),
        ("2", ("text", None, "2")),  # chose "Other…" to write something else: not option 2
        ("mysql!", ("text", None, "mysql!")),
        ("SQLite, please", ("text", None, "SQLite, please")),
    ],
)
async def test_an_option_named_in_the_other_box_is_that_option_anything_else_text(
    store: Store, make_gateway, typed: str, answer: tuple[str, str | None, str]
):
    runner = ScriptedRunner(asks(choice_request("Which database?", ["PostgreSQL", "MySQL"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the schema")
    await gateway.drain()
    assert (await chat.answer_text(typed)).accepted
    await gateway.drain()
    assert picks(runner) == [answer]


async def test_an_approve_in_the_other_language_in_the_box_asks_for_confirm_too(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "reject"))
    runner = ScriptedRunner(asks(approval_request("i5", [action], "en")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("clean up the test data")
    await gateway.drain()

    outcome = await chat.answer_text("批准")  # Approve, in the other language
    await gateway.drain()
    assert (outcome.status, outcome.message) == (AnswerStatus.INVALID, CONFIRM_LINE["en"])
    assert len(runner.calls) == 1 and await still_open(gateway, chat)  # nothing decided yet

    outcome = await chat.answer_text("confirm")
    await gateway.drain()
    assert outcome.accepted and picks(runner) == [("option", "option-1", "Approve")]
