"""A plain "yes" typed to a risk confirmation is no way past its second step: with one go-ahead
option it picks that option and is asked for "confirm" as a typed pick is; with several it is
asked which one. Either way the question stays open and nothing reaches the agent until the
person confirms (before, "yes" closed the question as "sent a new message instead" and ran as the
request "yes", right after the agent's destructive question)."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import HumanInputRequest, Option
from clarigate.agent.protocol.risk import is_affirmative
from clarigate.gateway.store.base import Store


def risk(labels: list[str], locale: str = "en") -> HumanInputRequest:
    return HumanInputRequest(
        request_id="clarification:wipe",
        tool_call_id="wipe",
        clarification_type="risk_confirmation",
        question="Delete the 3 prod tables?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)],
        locale=locale,
    )


def asks(request: HumanInputRequest):
    def script(turn: Turn) -> TurnOutput:
        if turn.response is None and turn.text.startswith("tidy"):
            return asking(request)
        return TurnOutput(replies=[f"ran with: {turn.response.value if turn.response else turn.text}"])

    return script


async def still_open(gateway, chat) -> bool:
    view = await gateway.pending_by_token(chat.last_request().token)
    return view is not None and view.status == "pending"


@pytest.mark.parametrize(
    ("typed", "locale", "asked"),
    [
        (
            "yes",
            "en",
            "Reply “confirm” to go ahead with “Delete them”; anything else keeps the question open.",
        ),
        (
            "OK!",
            "en",
            "Reply “confirm” to go ahead with “Delete them”; anything else keeps the question open.",
        ),
        (
            "Ｙｅｓ.",
            "en",
            "Reply “confirm” to go ahead with “Delete them”; anything else keeps the question open.",
        ),
        ("是", "zh", "回复「确认」以执行「Delete them」；回复其他内容则问题保持未答。"),
        ("好的。", "zh", "回复「确认」以执行「Delete them」；回复其他内容则问题保持未答。"),
        ("好！", "zh", "回复「确认」以执行「Delete them」；回复其他内容则问题保持未答。"),
        ("确定", "zh", "回复「确认」以执行「Delete them」；回复其他内容则问题保持未答。"),
    ],
)
async def test_a_plain_yes_picks_the_one_go_ahead_option_and_asks_for_confirm(
    store: Store, make_gateway, typed: str, locale: str, asked: str
):
    runner = ScriptedRunner(asks(risk(["Delete them", "Keep them"], locale)))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply(typed)
    await gateway.drain()
    assert chat.texts()[-1] == asked
    assert len(runner.calls) == 1 and await still_open(gateway, chat)  # nothing ran, nothing closed

    await chat.reply("确认" if locale == "zh" else "confirm")
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["Delete them"]


async def test_yes_again_while_asked_to_confirm_asks_again_and_confirms_nothing(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(["Keep them", "Delete them"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("2")
    await gateway.drain()
    ask = chat.texts()[-1]
    assert ask.startswith("Reply “confirm” to go ahead with “Delete them”")

    await chat.reply("yes")
    await gateway.drain()
    assert chat.texts()[-1] == ask and len(runner.calls) == 1 and await still_open(gateway, chat)
    await chat.reply("confirm")  # the pick was kept
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["Delete them"]


async def test_with_several_go_ahead_options_a_plain_yes_is_asked_which_one(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(["Archive them", "Keep them", "Delete them"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply("yes")
    await gateway.drain()
    assert chat.texts()[-1] == (
        "More than one option goes ahead here: reply with the number or label of the one you mean "
        "(1. Archive them / 3. Delete them)."
    )
    assert len(runner.calls) == 1 and await still_open(gateway, chat)
    await chat.reply("confirm")  # nothing was picked
    await gateway.drain()
    assert chat.texts()[-1].startswith("There is nothing of yours to confirm") and len(runner.calls) == 1


async def test_an_option_labelled_ok_is_picked_by_its_label(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(["OK", "Archive them", "Keep them"])))  # two go ahead
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("ok")  # that option, by its label: not "which one?"
    await gateway.drain()
    assert chat.texts()[-1].startswith("Reply “confirm” to go ahead with “OK”")
    await chat.reply("confirm")
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["OK"]


async def test_a_plain_yes_to_an_approval_asks_to_confirm_approve(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "edit", "reject"))
    runner = ScriptedRunner(asks(approval_request("i1", [action], "en")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("ok")
    await gateway.drain()
    assert (
        chat.texts()[-1]
        == "Reply “confirm” to go ahead with “Approve”; anything else keeps the question open."
    )
    assert len(runner.calls) == 1 and await still_open(gateway, chat)


async def test_a_yes_that_says_more_is_a_new_message_as_before(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(["Delete them", "Keep them"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("yes but only the staging ones")
    await gateway.drain()
    assert [c.text for c in runner.calls[1:]] == ["yes but only the staging ones"]
    assert not await still_open(gateway, chat)


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("yes", True),
        ("  Yes  ", True),
        ("YES!", True),
        ("ｏｋ", True),
        ("okay.", True),
        ("是", True),
        ("好的。", True),
        ("好！", True),
        ("确定！", True),
        ("yes please", False),
        ("yes, delete them", False),
        ("yes?", False),
        ("confirm", False),  # the confirming word is its own thing
        ("确认", False),
        ("no", False),
        ("", False),
        ("!", False),
    ],
)
def test_what_reads_as_a_plain_yes(text: str, plain: bool) -> None:
    assert is_affirmative(text) is plain
