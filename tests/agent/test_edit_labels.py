"""The labels of an approval's Edit form: the argument alone for one call; ``tool.argument`` for
several; ``tool #n · argument`` when the approval reviews a tool more than once, so that the
person can tell which call a field edits, whatever the length of the tool's name."""

from __future__ import annotations

from typing import Any

from clarigate.agent.interrupts import actions_of, edit_request
from clarigate.agent.protocol.models import MAX_STRING, Locale


def _batched(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "action_requests": [{"name": name, "args": args} for name, args in calls],
        "review_configs": [
            {"action_name": name, "allowed_decisions": ["approve", "edit", "reject"]} for name, _ in calls
        ],
    }


def _labels(value: dict[str, Any]) -> list[str]:
    return [f.label for f in edit_request("i1", actions_of(value), "en").fields]


def test_two_calls_of_one_tool_are_told_apart_in_the_labels() -> None:
    value = _batched(
        ("delete_rows", {"table": "users", "limit": 5}),
        ("delete_rows", {"table": "orders", "limit": 7}),
        ("send_mail", {"to": "ops@example.com"}),
    )
    assert _labels(value) == [
        "delete_rows #1 · table",
        "delete_rows #1 · limit",
        "delete_rows #2 · table",
        "delete_rows #2 · limit",
        "send_mail.to",
    ]


def test_one_call_and_calls_of_different_tools_keep_their_labels() -> None:
    assert _labels({"type": "tool_approval", "name": "delete_rows", "args": {"table": "users"}}) == ["table"]
    assert _labels(_batched(("a", {"x": 1}), ("b", {"x": 2}))) == ["a.x", "b.x"]


def test_a_long_tool_name_never_cuts_off_which_call_a_field_edits() -> None:
    name = "purge_" + "x" * 300
    labels = _labels(_batched((name, {"table": "users"}), (name, {"table": "orders"})))
    assert all(len(label) <= MAX_STRING for label in labels)
    assert [label.rsplit("…", 1)[1] for label in labels] == [" #1 · table", " #2 · table"]


def _title(value: dict[str, Any], locale: Locale = "en") -> str:
    return edit_request("i1", actions_of(value), locale).question


def test_the_form_names_a_tool_called_twice_once_with_how_many_calls() -> None:
    twice = _batched(("transfer", {"amount": 5}), ("transfer", {"amount": 7}))
    assert _title(twice) == "Edit the arguments of transfer (2 calls)"
    assert _title(twice, "zh") == "修改 transfer（2 次调用） 的参数"
    mixed = _batched(("transfer", {"amount": 5}), ("refund", {"id": 1}), ("transfer", {"amount": 7}))
    assert _title(mixed) == "Edit the arguments of transfer (2 calls), refund"
    assert _title(_batched(("a", {"x": 1}), ("b", {"x": 2}))) == "Edit the arguments of a, b"
    assert _title(_batched(("a", {"x": 1}))) == "Edit the arguments of a"
