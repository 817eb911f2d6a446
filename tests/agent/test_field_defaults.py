"""A form field's ``default``: normalized from sloppy input, taken by a blank field, shown by the
text fallback, and an approval's Edit that counts only changed fields."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.interrupts import APPROVAL_EDIT, AskAgain, actions_of, edit_request, resume_value
from clarigate.agent.protocol import (
    answer_with_form,
    check_form_values,
    normalize_request,
    parse_typed_reply,
    render_text_fallback,
)

CHOICES = ["Alpha", {"label": "Beta", "value": "b"}, "Gamma"]


def _field(**spec: Any) -> Any:
    request = normalize_request({"question": "?", "fields": [{"name": "x", **spec}]}, "call")
    return request.fields[0]


@pytest.mark.parametrize(
    ("spec", "default"),
    [
        ({"type": "checkbox", "default": "true"}, True),
        ({"type": "boolean", "default": "no"}, False),
        ({"type": "number", "default": "100"}, 100),
        ({"type": "number", "default": 2.5}, 2.5),
        ({"type": "number", "default": "lots"}, None),
        ({"type": "date", "default": "2026/1/2"}, "2026-01-02"),
        ({"type": "date", "default": "soon"}, None),
        ({"type": "select", "options": CHOICES, "default": "beta"}, "b"),
        ({"type": "select", "options": CHOICES, "default": "Delta"}, None),
        ({"type": "multi_select", "options": CHOICES, "default": '["Gamma", "Alpha"]'}, ["Alpha", "Gamma"]),
        ({"type": "text", "default": "  kept  "}, "kept"),
        ({"type": "text", "default": "   "}, None),
        ({"type": "textarea", "default": "x" * 3001}, None),
        ({"type": "text", "default_value": 7}, "7"),
    ],
)
def test_a_default_is_typed_like_an_answer_or_dropped(spec: dict[str, Any], default: Any) -> None:
    field = _field(**spec)
    assert field.default == default and type(field.default) is type(default)


def test_a_field_left_out_takes_its_default_and_a_required_one_counts_as_given() -> None:
    request = normalize_request(
        {
            "question": "?",
            "fields": [
                {"name": "table", "required": True, "default": "users"},
                {"name": "dry_run", "type": "checkbox", "default": True},
                {"name": "limit", "type": "number", "required": True},
            ],
        },
        "call",
    )
    check = check_form_values(request, {"limit": "5"})
    assert check.values == {"table": "users", "dry_run": True, "limit": 5}
    assert check_form_values(request, {}).errors.keys() == {"limit"}
    assert check_form_values(request, {"dry_run": False, "limit": 5}).values["dry_run"] is False


EMPTIED = normalize_request(
    {
        "question": "?",
        "fields": [
            {"name": "name", "required": True, "default": "atlas"},
            {"name": "notes", "default": "keep it small"},
            {"name": "tags", "type": "multi_select", "options": CHOICES, "default": ["Alpha"]},
        ],
    },
    "call",
)


@pytest.mark.parametrize("blank", ["", "  ", None, []])
def test_a_field_the_person_emptied_has_no_value_not_its_default(blank: Any) -> None:
    answer = answer_with_form(
        EMPTIED, check_form_values(EMPTIED, {"notes": blank, "tags": blank}).values, None
    )
    assert answer.values == {"name": "atlas"}  # what the agent gets: neither the old notes nor tags
    assert check_form_values(EMPTIED, {"name": blank}).errors.keys() == {"name"}  # required: refused


def test_a_typed_line_with_nothing_after_it_empties_its_field() -> None:
    reply = parse_typed_reply(EMPTIED, "name: demo\nnotes:", None)
    assert reply.response is not None and reply.response.values == {"name": "demo", "tags": ["Alpha"]}


def test_the_text_fallback_shows_current_values_and_a_reply_changes_only_what_it_names() -> None:
    request = normalize_request(
        {
            "question": "?",
            "fields": [
                {"name": "table", "default": "users"},
                {"name": "dry_run", "type": "checkbox", "default": True},
            ],
        },
        "call",
    )
    text = render_text_fallback(request)
    assert "Table (current: users)" in text and "Dry run — yes / no (current: yes)" in text
    reply = parse_typed_reply(request, "table: orders", None)
    assert reply.response is not None and reply.response.values == {"table": "orders", "dry_run": True}


def _resume(args: dict[str, Any], raw: dict[str, Any]) -> Any:
    value = {"type": "tool_approval", "name": "t", "args": args}
    request = edit_request("c", actions_of(value), "en")
    check = check_form_values(request, raw)
    assert check.ok, check.errors
    return resume_value(APPROVAL_EDIT, "c", value, answer_with_form(request, check.values, None))


def _edited(decision: Any) -> dict[str, Any]:
    assert decision["type"] == "edit", decision
    return dict(decision["edited_action"]["args"])


def test_numbers_keep_their_type() -> None:
    edited = _edited(_resume({"limit": 100, "ratio": 2.5, "n": 1}, {"ratio": "3", "n": "2"}))
    assert edited == {"limit": 100, "ratio": 3.0, "n": 2}
    assert type(edited["limit"]) is int and type(edited["ratio"]) is float and type(edited["n"]) is int


def test_a_string_that_looks_like_json_stays_a_string() -> None:
    assert _resume({"q": "[1, 2]"}, {}) == {"type": "approve"}
    assert _edited(_resume({"q": "[1, 2]", "r": "x"}, {"q": "[3]"})) == {"q": "[3]", "r": "x"}


def test_json_arguments_come_back_parsed() -> None:
    edited = _edited(_resume({"tags": ["a"], "where": {"id": 1}}, {"tags": '["a", "b"]'}))
    assert edited == {"tags": ["a", "b"], "where": {"id": 1}}


def test_unparseable_json_for_a_list_asks_again_with_what_was_typed() -> None:
    again = _resume({"tags": ["a"], "table": "users"}, {"tags": '["a", ', "table": "orders"})
    assert isinstance(again, AskAgain)
    assert again.request.context is not None and again.request.context.startswith("tags: not valid JSON")
    shown = {f.name: f.default for f in again.request.fields}
    assert shown == {"tags": '["a",', "table": "orders"}  # what the person gave, to fix
    # the form asked again compares with the original arguments, not with what it showed
    value = {"type": "tool_approval", "name": "t", "args": {"tags": ["a"], "table": "users"}}
    check = check_form_values(again.request, {"tags": '["b"]'})
    decision = resume_value(APPROVAL_EDIT, "c", value, answer_with_form(again.request, check.values, None))
    assert _edited(decision) == {"tags": ["b"], "table": "orders"}


def test_text_for_a_null_argument_is_kept_as_text() -> None:
    assert _edited(_resume({"note": None}, {"note": "call me"})) == {"note": "call me"}
    assert _resume({"note": None}, {}) == {"type": "approve"}


def test_a_long_argument_too_big_to_show_is_kept_when_left_blank() -> None:
    long = "y" * 5000
    request = edit_request("c", actions_of({"type": "tool_approval", "name": "t", "args": {"s": long}}), "en")
    assert request.fields[0].default is None and request.fields[0].placeholder
    assert _resume({"s": long}, {}) == {"type": "approve"}


def test_arguments_whose_names_a_form_would_change_are_still_edited() -> None:
    args = {"limit_": 1, "名前": "a", "Limit": 2, "limit": 3}
    value = {"type": "tool_approval", "name": "t", "args": args}
    request = edit_request("c", actions_of(value), "en")
    assert [f.label for f in request.fields] == list(args)
    by_label = {f.label: f.name for f in request.fields}
    raw = {by_label["limit_"]: "10", by_label["名前"]: "b", by_label["Limit"]: "20"}
    check = check_form_values(request, raw)
    decision = resume_value(APPROVAL_EDIT, "c", value, answer_with_form(request, check.values, None))
    assert _edited(decision) == {"limit_": 10, "名前": "b", "Limit": 20, "limit": 3}
