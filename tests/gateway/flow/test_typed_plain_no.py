"""A plain "no" typed to a risk confirmation is its one safe option: answered at once, as that
option typed is (a safe option needs no confirmation), the question closed as answered. Before,
"no" or "否" closed the question as "sent a new message instead" and ran as the request "no"
("What would you like me to do about “no”?"), while "yes" was read as the go-ahead option. With no
safe option, or several, "no" is read as before."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import normalize_request
from clarigate.agent.protocol.risk import is_negative
from clarigate.gateway.store.base import Store
from tests.gateway.flow.test_typed_confirm_forms import SELECT
from tests.gateway.flow.test_typed_confirm_forms import asks as asks_form
from tests.gateway.flow.test_typed_plain_yes import asks, risk


async def status(gateway, chat) -> str | None:
    view = await gateway.pending_by_token(chat.last_request().token)
    return None if view is None else view.status


@pytest.mark.parametrize(
    ("typed", "locale", "labels"),
    [
        ("no", "en", ["Yes, delete it", "No, keep it"]),
        ("No!", "en", ["Yes, delete it", "No, keep it"]),
        ("ｎｏ", "en", ["Yes, delete it", "No, keep it"]),
        ("nope", "en", ["No, keep it", "Yes, delete it"]),
        ("no thanks.", "en", ["Yes, delete it", "No, keep it"]),
        ("否", "zh", ["是，删除", "否，保留"]),
        ("不要", "zh", ["是，删除", "否，保留"]),
        ("不用了。", "zh", ["是，删除", "否，保留"]),
        ("算了！", "zh", ["否，保留", "是，删除"]),
    ],
)
async def test_a_plain_no_answers_the_one_safe_option_at_once(
    store: Store, make_gateway, typed: str, locale: str, labels: list[str]
):
    runner = ScriptedRunner(asks(risk(labels, locale)))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply(typed)
    await gateway.drain()
    safe = "No, keep it" if locale == "en" else "否，保留"
    assert [c.response.value for c in runner.calls[1:] if c.response] == [safe]
    assert len(runner.calls) == 2 and chat.texts()[-1] == f"ran with: {safe}"
    assert await status(gateway, chat) == "answered"


async def test_no_while_asked_to_confirm_drops_the_pick_and_answers_the_safe_option(
    store: Store, make_gateway
):
    runner = ScriptedRunner(asks(risk(["No, keep it", "Yes, delete it"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("2")
    await gateway.drain()
    assert chat.texts()[-1].startswith("Reply “confirm” to go ahead with “Yes, delete it”")

    await chat.reply("no")
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["No, keep it"]
    assert await status(gateway, chat) == "answered"


@pytest.mark.parametrize(
    "labels",
    [
        ["Delete them", "Keep them", "Cancel"],  # two read safe: which one "no" means is unclear
        ["Delete them", "Archive them"],  # none reads safe
    ],
)
async def test_without_exactly_one_safe_option_no_is_a_new_message_as_before(
    store: Store, make_gateway, labels: list[str]
):
    runner = ScriptedRunner(asks(risk(labels)))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()

    await chat.reply("no")
    await gateway.drain()
    assert [c.text for c in runner.calls[1:]] == ["no"] and runner.calls[1].response is None
    assert await status(gateway, chat) != "pending"


async def test_a_no_that_says_more_is_a_new_message_as_before(store: Store, make_gateway):
    runner = ScriptedRunner(asks(risk(["Delete them", "Keep them"])))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("no, only drop the staging ones")
    await gateway.drain()
    assert [c.text for c in runner.calls[1:]] == ["no, only drop the staging ones"]


async def test_a_plain_no_to_an_approval_rejects(store: Store, make_gateway):
    action = Action("delete_records", {"table": "test_data"}, ("approve", "edit", "reject"))
    runner = ScriptedRunner(asks(approval_request("i1", [action], "en")))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("nope")
    await gateway.drain()
    assert [c.response.value for c in runner.calls if c.response] == ["Reject"]


async def test_a_plain_no_to_a_risk_form_of_one_select_picks_its_safe_option(store: Store, make_gateway):
    runner = ScriptedRunner(asks_form(SELECT))
    gateway, chat = await make_gateway(store, runner)
    await chat.say("tidy up")
    await gateway.drain()
    await chat.reply("no")
    await gateway.drain()
    keep = normalize_request(SELECT, "wipe").fields[0].options[1].value
    assert [c.response.values for c in runner.calls if c.response] == [{"action": keep}]
    assert await status(gateway, chat) == "answered"


@pytest.mark.parametrize(
    ("text", "plain"),
    [
        ("no", True),
        ("  No  ", True),
        ("NO!", True),
        ("n", True),
        ("nah.", True),
        ("No thanks", True),
        ("ｎｏｐｅ", True),
        ("否", True),
        ("不", True),
        ("不要！", True),
        ("不用", True),
        ("不用了。", True),
        ("算了", True),
        ("no, delete them", False),
        ("no?", False),
        ("not now", False),
        ("yes", False),
        ("", False),
        ("。", False),
    ],
)
def test_what_reads_as_a_plain_no(text: str, plain: bool) -> None:
    assert is_negative(text) is plain
