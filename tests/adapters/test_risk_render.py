"""No one-click go-ahead: a risk confirmation's destructive option, first, last or in the middle,
asks again on every platform; the safe choice and an approval's Edit answer at once, unstyled."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block

from clarigate.adapters.feishu.render import render_clarification as feishu_card
from clarigate.adapters.slack.render import render_clarification as slack_blocks
from clarigate.adapters.telegram import callback_data as cb
from clarigate.adapters.telegram.confirms import go_ahead_index
from clarigate.adapters.telegram.render import render_clarification as telegram_message
from clarigate.adapters.telegram.render import render_confirm
from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import HumanInputRequest, Option
from clarigate.agent.protocol.risk import go_ahead_ids
from clarigate.gateway.boundary.outbound_items import ClarificationOut
from tests.adapters.feishu.card_schema import check_card
from tests.adapters.feishu.cards import components

TOKEN = "tok12345"
DELETE = "Yes, delete everything"


def risk(labels: list[str]) -> HumanInputRequest:
    return HumanInputRequest(
        request_id="clarification:r1",
        tool_call_id="r1",
        clarification_type="risk_confirmation",
        question="Delete the test data?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)],
    )


def slack_buttons(request: HumanInputRequest) -> dict[str, dict[str, Any]]:
    """Option label -> the Slack button showing it (the blocks checked the way Slack parses them)."""
    blocks = slack_blocks(ClarificationOut(request=request, fallback_text="fb", token=TOKEN))
    for block in blocks:
        assert Block.parse(block).to_dict() == block  # type: ignore[union-attr]
    elements = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    return {e["text"]["text"]: e for e in elements if e["action_id"].startswith("clarigate:o")}


def feishu_buttons(request: HumanInputRequest) -> dict[str, dict[str, Any]]:
    card = feishu_card(request, TOKEN, "fb")
    check_card(card)  # what Feishu accepts
    return {b["text"]["content"]: b for b in components(card, "button")}


def telegram_buttons(request: HumanInputRequest) -> list[dict[str, Any]]:
    markup = telegram_message(ClarificationOut(request=request, fallback_text="fb", token=TOKEN)).reply_markup
    return [b.to_dict() for row in markup.inline_keyboard for b in row]  # type: ignore[union-attr]


LAYOUTS = {
    "first": [DELETE, "No, keep it"],
    "last": ["No, keep it", DELETE],
    "middle": ["Keep the data", DELETE, "Cancel"],
}


@pytest.mark.parametrize("layout", LAYOUTS)
def test_slack_the_destructive_button_is_red_and_behind_a_dialog_wherever_it_is(layout: str) -> None:
    buttons = slack_buttons(risk(LAYOUTS[layout]))
    delete = buttons.pop(DELETE)
    assert delete["style"] == "danger"
    assert delete["confirm"]["style"] == "danger"
    assert delete["confirm"]["title"]["text"] == "Are you sure?"
    assert delete["confirm"]["text"] == {
        "type": "plain_text",
        "text": "Go ahead with “Yes, delete everything”? This may not be reversible.",
        "emoji": True,
    }
    assert (delete["confirm"]["confirm"]["text"], delete["confirm"]["deny"]["text"]) == ("Confirm", "Go back")
    for safe in buttons.values():  # the keep / cancel choice: neutral, one click
        assert "style" not in safe and "confirm" not in safe


@pytest.mark.parametrize("layout", LAYOUTS)
def test_feishu_the_destructive_button_is_danger_and_asks_wherever_it_is(layout: str) -> None:
    buttons = feishu_buttons(risk(LAYOUTS[layout]))
    delete = buttons.pop(DELETE)
    assert delete["type"] == "danger"
    assert delete["confirm"] == {
        "title": {"tag": "plain_text", "content": "Are you sure?"},
        "text": {
            "tag": "plain_text",
            "content": "Go ahead with “Yes, delete everything”? This may not be reversible.",
        },
    }
    for safe in buttons.values():  # the safe choice and Cancel
        assert safe["type"] == "default" and "confirm" not in safe
    # never two buttons reading "Cancel" that do different things (an option, the way out)
    texts = [
        b["text"]["content"] for b in components(feishu_card(risk(LAYOUTS[layout]), TOKEN, "fb"), "button")
    ]
    assert texts.count("Cancel") == 1
    assert ("Skip" in texts) == ("Cancel" in LAYOUTS[layout])


@pytest.mark.parametrize("layout", LAYOUTS)
def test_telegram_the_destructive_tap_only_asks_wherever_it_is(layout: str) -> None:
    request = risk(LAYOUTS[layout])
    buttons = telegram_buttons(request)
    position = LAYOUTS[layout].index(DELETE) + 1
    way_out = "✖ Skip" if "Cancel" in LAYOUTS[layout] else "✖ Cancel"  # never a second "Cancel"
    assert [b["text"] for b in buttons] == [
        *(("⚠️ " if label == DELETE else "") + label for label in LAYOUTS[layout]),
        way_out,
    ]
    for index, b in enumerate(buttons, 1):
        code = cb.decode(b["callback_data"]).action  # type: ignore[union-attr]
        assert go_ahead_index(request, code) == (position if index == position else None)
    confirm = render_confirm(request, TOKEN, position, "111")  # drawn for the person who picked it
    rows = [[b.to_dict() for b in row] for row in confirm.reply_markup.inline_keyboard]  # type: ignore[union-attr]
    assert rows == [
        [{"text": "⚠️ Yes: Yes, delete everything", "callback_data": f"{TOKEN}|Y{position}:111"}],
        [{"text": "◀ Go back", "callback_data": f"{TOKEN}|R"}],
    ]
    assert "Go ahead with “Yes, delete everything”?" in confirm.text


def test_an_approval_approve_asks_reject_and_edit_are_neutral_on_every_platform() -> None:
    action = Action("delete_records", {"table": "test_data", "dry_run": True}, ("approve", "edit", "reject"))
    request = approval_request("i1", [action], "en")
    slack = slack_buttons(request)
    assert [(label, b.get("style"), "confirm" in b) for label, b in slack.items()] == [
        ("Approve", "danger", True),
        ("Reject", None, False),
        ("Edit", None, False),
    ]
    feishu = feishu_buttons(request)
    assert [(label, b["type"], "confirm" in b) for label, b in feishu.items()] == [
        ("Approve", "danger", True),
        ("Reject", "default", False),
        ("Edit", "default", False),
        ("Cancel", "default", False),
    ]
    assert [b["text"] for b in telegram_buttons(request)] == ["⚠️ Approve", "Reject", "Edit", "✖ Cancel"]


def test_a_dropdown_of_many_options_keeps_its_dialog_only_when_something_goes_ahead() -> None:
    many = ["Keep the data"] + [f"Delete table {i}" for i in range(1, 8)]
    blocks = slack_blocks(ClarificationOut(request=risk(many), fallback_text="fb", token=TOKEN))
    [select] = [e for b in blocks for e in b.get("elements", []) if e["type"] == "static_select"]
    assert select["confirm"]["style"] == "danger"


def test_a_no_that_goes_ahead_asks_on_every_platform() -> None:
    """ "No, drop it now" goes ahead as "Yes, back up first" does: both red and asking, everywhere."""
    both = ["Yes, back up first", "No, drop it now"]
    request = risk(both)
    for label, button in slack_buttons(request).items():
        assert button["style"] == "danger" and "confirm" in button, label
    feishu = feishu_buttons(request)
    assert [(feishu[label]["type"], "confirm" in feishu[label]) for label in both] == [("danger", True)] * 2
    assert [b["text"] for b in telegram_buttons(request)][:2] == [f"⚠️ {label}" for label in both]
    assert [go_ahead_index(request, f"o{i}") for i in (1, 2)] == [1, 2]  # each tap only asks again


LABELS = st.one_of(
    st.sampled_from(
        [
            DELETE,
            "No, keep it",
            "Keep the data",
            "Delete the data",
            "Cancel",
            "取消",
            "是，删除",
            "保留",
            "Stop the server",
            "Don't delete",
            "Cancel the order",
            "Approve",
            "Reject",
            "Edit",
            "No, drop it now",
            "Yes, back up first",
            "不，直接删除",
        ]
    ),  # fmt: skip
    st.text(min_size=1, max_size=40).filter(str.strip),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(LABELS, min_size=2, max_size=5, unique_by=lambda s: s.strip().casefold()))
def test_every_go_ahead_option_carries_its_confirm_step_on_every_platform(labels: list[str]) -> None:
    request = risk(labels)
    going = set(go_ahead_ids(request))  # empty only when every option reads safe
    slack = slack_blocks(ClarificationOut(request=request, fallback_text="fb", token=TOKEN))
    slack_elements = {
        e["value"].rpartition("|")[2]: e
        for b in slack
        if b["type"] == "actions"
        for e in b["elements"]
        if e["action_id"].startswith("clarigate:o")
    }
    card = feishu_card(request, TOKEN, "fb")
    feishu = {b["behaviors"][0]["value"]["a"]: b for b in components(card, "button")}
    telegram = {cb.decode(b["callback_data"]).action: b for b in telegram_buttons(request)}  # type: ignore[union-attr]
    for index, option in enumerate(request.options, 1):
        code = f"o{index}"
        goes = option.id in going
        if slack_elements:  # the native rendering (it fell back to text when nothing fits)
            assert ("confirm" in slack_elements[code]) is goes
            assert (slack_elements[code].get("style") == "danger") is goes
        if feishu:
            assert ("confirm" in feishu[code]) is goes and (feishu[code]["type"] == "danger") is goes
        assert (go_ahead_index(request, code) is not None) is goes  # the tap only asks again
        assert telegram[code]["text"].startswith("⚠️ ") is goes
