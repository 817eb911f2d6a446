"""Which options of a risk confirmation go ahead: read from the request, never from the position."""

from __future__ import annotations

import pytest

from clarigate.agent.interrupts import Action, approval_request
from clarigate.agent.protocol import FormField, HumanInputRequest, Option, normalize_request
from clarigate.agent.protocol.risk import (
    form_goes_ahead,
    go_ahead_ids,
    goes_ahead,
    hides_default,
    is_confirm_word,
    option_roles,
    reads_safe,
)

SAFE = [
    "No, keep it",
    "Keep the data",
    "Cancel",
    "Yes, keep it",
    "Don't delete",
    "Do not proceed",
    "don’t do it",
    "Leave it as is",
    "Stop",
    "Not now",
    "Never mind",
    "❌ Cancel",
    "不要",
    "取消",
    "保留",
    "否，保留",
    "不用删除",
    "取消操作",
    "确认取消",
]
GO_AHEAD = [
    "Yes, delete everything",
    "Delete the data",
    "Confirm",
    "Yes",
    "Cancel the order",  # cancelling something is the destructive act here
    "Stop the server",
    "Leave the channel",
    "Keep going",
    "Don't keep a backup",
    "Skip backups",
    "Now delete",
    "是，删除",
    "确定删除",
    "取消订单",
    "不保留数据",
]


@pytest.mark.parametrize("label", SAFE)
def test_keep_cancel_no_labels_read_safe(label: str) -> None:
    assert reads_safe(label)


@pytest.mark.parametrize("label", GO_AHEAD)
def test_every_other_label_goes_ahead(label: str) -> None:
    assert not reads_safe(label)


def risk(*labels: str, source: str = "ask_clarification") -> HumanInputRequest:
    return HumanInputRequest(
        request_id="clarification:r",
        tool_call_id="r",
        source=source,
        clarification_type="risk_confirmation",
        question="Delete the test data?",
        input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=label, value=label) for i, label in enumerate(labels, 1)],
    )


@pytest.mark.parametrize(
    ("labels", "going"),
    [
        (["No, keep it", "Yes, delete everything"], ["option-2"]),  # destructive last
        (["Delete the data", "Keep the data"], ["option-1"]),  # first
        (["Keep the data", "Delete the data", "Archive it"], ["option-2", "option-3"]),  # middle on
        (["Drop it", "Truncate it"], ["option-1", "option-2"]),  # none reads safe: all ask
    ],
)
def test_roles_follow_the_labels_not_the_position(labels: list[str], going: list[str]) -> None:
    request = risk(*labels)
    assert go_ahead_ids(request) == going
    assert {o.id for o in request.options if option_roles(request)[o.id] == "safe"} == {
        o.id for o in request.options if o.id not in going
    }


def test_an_approval_approve_goes_ahead_reject_is_safe_edit_is_neutral() -> None:
    for locale in ("en", "zh"):
        action = Action("delete_records", {"table": "users"}, ("approve", "edit", "reject"))
        request = approval_request("i1", [action], locale)
        roles = [option_roles(request)[o.id] for o in request.options]
        assert roles == ["go_ahead", "safe", "neutral"], locale


def test_an_approve_only_review_is_turned_down_by_its_dismissal_not_a_second_cancel() -> None:
    request = approval_request("i1", [Action("send_mail", {"to": "a"}, ("approve",))], "en")
    assert [(o.label, option_roles(request)[o.id]) for o in request.options] == [("Approve", "go_ahead")]


def test_a_one_option_risk_confirmation_gets_cancel_as_its_safe_choice() -> None:
    request = normalize_request(
        {"question": "Wipe the disk?", "clarification_type": "risk_confirmation", "options": ["Wipe it"]},
        tool_call_id="c1",
    )
    assert [o.label for o in request.options] == ["Wipe it", "Cancel"]
    assert go_ahead_ids(request) == ["option-1"]


def test_other_questions_have_no_roles() -> None:
    request = risk("Delete it", "Keep it").model_copy(update={"clarification_type": "approach_choice"})
    assert option_roles(request) == {} and not goes_ahead(request, "option-1")


@pytest.mark.parametrize(
    ("text", "confirms"),
    [
        ("confirm", True),
        ("Confirm.", True),
        ("确认", True),
        ("yes", False),
        ("2", False),
        ("confirmed it", False),
    ],
)
def test_the_confirming_word(text: str, confirms: bool) -> None:
    assert is_confirm_word(text) is confirms


#: A leading "no" that goes on to go ahead: what follows the "no" says it (as after a "yes").
NO_THEN_GOING = [
    "No, drop it now",
    "No, delete everything",
    "No problem, delete it",
    "No backup needed, drop the table",
    "No — proceed with deletion",
    "Nah, just wipe it",
    "Never mind the backup, drop it",
    "Don't back up, drop it",
    "不，直接删除",
    "不用备份，直接删除",
    "不要备份，删掉",
]
NO_THEN_SAFE = [
    "No",
    "No thanks",
    "No, thank you",
    "No, leave it alone",
    "No, cancel",
    "No, don't delete",
    "Nope, not now",
    "No!",
    "不",
    "不用了",
    "算了",
    "算了吧",
    "不，保留",
    "不，取消",
    "不删除",
]


@pytest.mark.parametrize("label", NO_THEN_GOING)
def test_a_no_followed_by_going_ahead_goes_ahead(label: str) -> None:
    assert not reads_safe(label)


@pytest.mark.parametrize("label", NO_THEN_SAFE)
def test_a_no_alone_or_followed_by_a_safe_choice_reads_safe(label: str) -> None:
    assert reads_safe(label)


@pytest.mark.parametrize(
    ("labels", "going"),
    [
        (["Yes, back up first", "No, drop it now"], ["option-1", "option-2"]),  # both go ahead: both ask
        (["是，先备份", "不，直接删除"], ["option-1", "option-2"]),
        (["Yes, delete", "No, keep it"], ["option-1"]),
        (["确定删除", "不，保留"], ["option-1"]),
    ],
)
def test_a_no_that_goes_ahead_asks_too(labels: list[str], going: list[str]) -> None:
    assert go_ahead_ids(risk(*labels)) == going


#: Plain refusals: a "don't" says no to whatever follows it, unless that is itself keeping or
#: stopping ("Don't keep it", "Don't cancel" go ahead); one confirm too many on these is a nuisance.
REFUSALS = [
    "Don't send it",
    "Don't deploy",
    "Don't run it",
    "Don't restart",
    "Don't push",
    "Don't merge",
    "Don't allow",
    "Don't approve",
    "Do not send",
    "No, don't send",
    "No don't send",
    "No, decline",
    "No, I changed my mind",
    "不同意",
    "不发送",
    "不要发送",
    "不要部署",
    "别发",
    "不允许",
    "不批准",
    "不要重启",
]
#: A refusal that goes on to something else still goes ahead.
REFUSAL_THEN_GOING = [
    "Don't keep it",
    "Don't cancel",
    "Don't wait",
    "Don't hold back",
    "Don't bother with a backup",
    "不用等了",
    "不删除而是覆盖",
    "不删除，改为覆盖",
    "Don't delete anything except the logs",
    "Don't send it, delete it",
    "Never mind the backup",
    "No, I changed my mind, delete it",
]


@pytest.mark.parametrize("label", REFUSALS)
def test_a_plain_refusal_reads_safe(label: str) -> None:
    assert reads_safe(label)


@pytest.mark.parametrize("label", REFUSAL_THEN_GOING)
def test_a_refusal_that_goes_on_to_act_goes_ahead(label: str) -> None:
    assert not reads_safe(label)


@pytest.mark.parametrize(
    "labels",
    [["Send it", "Don't send"], ["同意", "不同意"], ["Deploy now", "Don't deploy"], ["发送", "别发"]],
)
def test_only_the_doing_option_of_a_do_or_dont_pair_asks(labels: list[str]) -> None:
    assert go_ahead_ids(risk(*labels)) == ["option-1"]


def test_an_unticked_dont_checkbox_is_picked_and_asks_first() -> None:
    """Left unticked, "Don't send the email" sends: never the silent default, and a second step."""
    hold = FormField(name="hold", label="Don't send the email", type="checkbox")
    request = risk().model_copy(update={"input_mode": "form", "options": [], "fields": [hold]})
    assert hides_default(request, hold)
    assert form_goes_ahead(request, {"hold": False})
    assert not form_goes_ahead(request, {"hold": True})
