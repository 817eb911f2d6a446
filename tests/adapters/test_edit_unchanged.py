"""Property: an approval's Edit submitted as shown resumes with exactly the original arguments,
on every platform's real submit shape, read by the adapter's own parsing code."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clarigate.agent.interrupts import APPROVAL_EDIT, actions_of, edit_request, resume_value
from clarigate.agent.protocol import HumanInputRequest, answer_with_form, check_form_values

from . import unchanged_submissions as shapes

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

short_text = st.text(max_size=40)
long_text = st.text(min_size=81, max_size=400) | st.lists(st.text(max_size=30), min_size=2).map("\n".join)
iso_date = st.dates(dt.date(1900, 1, 1), dt.date(2100, 12, 31)).map(dt.date.isoformat)
scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
json_ish = st.recursive(
    scalar | short_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(short_text, inner, max_size=4),
    max_leaves=8,
)
argument = (
    st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | short_text
    | long_text
    | iso_date
    | st.lists(short_text, max_size=4)
    | st.dictionaries(short_text, json_ish, max_size=4)
    | st.none()
)
arguments = st.dictionaries(st.from_regex(r"[a-z][a-z0-9_]{0,15}", fullmatch=True), argument, max_size=8)


def typed(value: Any) -> Any:
    """``value`` with its types spelled out, so ``1``, ``1.0`` and ``True`` differ."""
    if isinstance(value, dict):
        return {k: typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [typed(v) for v in value]
    return (type(value).__name__, value)


def _console(request: HumanInputRequest) -> dict[str, Any]:
    return shapes.console_unchanged(request)[0]


PLATFORMS: dict[str, Callable[[HumanInputRequest], dict[str, Any]]] = {
    "slack": shapes.slack_unchanged,
    "feishu": shapes.feishu_unchanged,
    "telegram": shapes.telegram_unchanged,
    "console": _console,
}


def _resumed(args: dict[str, Any], submit: Callable[[HumanInputRequest], dict[str, Any]]) -> Any:
    value = {"type": "tool_approval", "name": "delete_records", "args": args}
    request = edit_request("call-1", actions_of(value), "en")
    check = check_form_values(request, submit(request))
    assert check.ok, check.errors
    return resume_value(APPROVAL_EDIT, "call-1", value, answer_with_form(request, check.values, None))


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@SETTINGS
@given(args=arguments)
def test_edit_submitted_as_shown_approves_the_original_call(platform: str, args: dict[str, Any]) -> None:
    assert _resumed(args, PLATFORMS[platform]) == {"type": "approve"}


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
@SETTINGS
@given(args=arguments, data=st.data())
def test_one_changed_field_edits_only_that_argument(platform: str, args: dict[str, Any], data: Any) -> None:
    """The unchanged submission with one field given a new value: only that argument changes,
    every other keeps its value and type."""
    if not args:
        return
    name = data.draw(st.sampled_from(sorted(args)))
    new = data.draw(st.from_regex(r"[A-Za-z]{1,12}", fullmatch=True))
    original = args[name]
    if isinstance(original, bool):
        new_raw: Any = not original
    elif isinstance(original, int | float):
        new_raw = original + 1 if abs(original) < 2**52 else 7
    elif isinstance(original, str) and len(original) == 10 and original[4] == "-":
        new_raw = "1999-12-31" if original != "1999-12-31" else "2000-01-01"
    elif isinstance(original, str):
        new_raw = new if new != original.strip() else new + "x"
    else:
        new_raw = json.dumps({"changed": new})

    def changed(request: HumanInputRequest) -> dict[str, Any]:
        field = next(f for f in request.fields if f.label == name)  # the field labelled by the argument
        return {**PLATFORMS[platform](request), field.name: new_raw}

    decision = _resumed(args, changed)
    assert decision["type"] == "edit"
    edited = decision["edited_action"]["args"]
    assert typed({k: v for k, v in edited.items() if k != name}) == typed(
        {k: v for k, v in args.items() if k != name}
    )
    expected = json.loads(new_raw) if not isinstance(original, bool | int | float | str) else new_raw
    if isinstance(original, float) and isinstance(expected, int):
        expected = float(expected)
    assert typed(edited[name]) == typed(expected)


def test_the_rendered_forms_show_the_current_values() -> None:
    """What the person sees: a ticked box for true, the number, the date, JSON for a list."""
    args = {"table": "test_data", "dry_run": True, "limit": 100, "tags": ["a", "b"], "before": "2026-01-31"}
    request = edit_request("c", actions_of({"type": "tool_approval", "name": "t", "args": args}), "en")
    modal = shapes.render_form_modal(request, "{}")
    elements = [b["element"] for b in modal["blocks"] if b["type"] == "input"]
    assert elements[0]["initial_value"] == "test_data"
    assert elements[1]["initial_options"][0]["value"] == "true"
    assert elements[2] == {**elements[2], "type": "number_input", "initial_value": "100"}
    assert elements[3]["initial_value"] == '["a", "b"]'
    assert elements[4] == {**elements[4], "type": "datepicker", "initial_date": "2026-01-31"}
    card = json.dumps(shapes.native_card(request, "tok"), ensure_ascii=False)
    for shown in ('"default_value": "test_data"', '"checked": true', '"default_value": "100"'):
        assert shown in card
    assert '"initial_date": "2026-01-31"' in card
    _, printed = shapes.console_unchanged(request)
    assert "dry_run [yes/no] (now yes; Enter keeps it): " in printed
    assert "limit [a number] (now 100; Enter keeps it): " in printed


MANY = [f"Option {n}" for n in range(1, 13)]  # more than Slack's checkbox group shows


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_models_form_submitted_as_shown_gives_its_defaults_back(platform: str) -> None:
    """Selects preselected, multi-selects (checkbox group and menu) ticked, on every platform."""
    from clarigate.agent.protocol import normalize_request

    fields = [
        {"name": "pick", "type": "select", "options": ["Alpha", "Beta"], "default": "Beta"},
        {"name": "few", "type": "multi_select", "options": ["A", "B", "C"], "default": ["C", "A"]},
        {"name": "lots", "type": "multi_select", "options": MANY, "default": ["Option 11", "Option 2"]},
        {"name": "agree", "type": "checkbox", "required": True, "default": True},
        {"name": "count", "type": "number", "default": 1e20},
        {"name": "draft", "type": "textarea", "default": "a long draft " * 150},  # more than an input shows
    ]
    request = normalize_request({"question": "Settings?", "fields": fields}, "call")
    check = check_form_values(request, PLATFORMS[platform](request))
    assert check.ok, check.errors
    assert typed(check.values) == typed(
        {
            "pick": "Beta",
            "few": ["A", "C"],
            "lots": ["Option 2", "Option 11"],
            "agree": True,
            "count": 10**20,
            "draft": ("a long draft " * 150).strip(),
        }
    )


def _slack_emptied(element: dict[str, Any]) -> dict[str, Any]:
    """One element's ``view.state.values`` entry once the person emptied it (Slack's shapes)."""
    kind = element["type"]
    if kind in ("plain_text_input", "number_input"):
        return {"type": kind, "value": None}
    if kind == "datepicker":
        return {"type": kind, "selected_date": None}
    return {"type": kind, "selected_options": []}


EMPTIED: dict[str, Callable[[HumanInputRequest], dict[str, Any]]] = {
    "slack": lambda request: shapes.slack_form_values(
        request,
        {
            block["block_id"]: {block["element"]["action_id"]: _slack_emptied(block["element"])}
            for block in shapes.render_form_modal(request, "{}")["blocks"]
            if block["type"] == "input"
        },
    ),
    "feishu": lambda request: shapes.feishu_actions.form_values(
        request,
        {
            name: [] if kind == "multi_select_static" else ""
            for name, kind in (
                (c["name"], c["tag"])
                for c in shapes._feishu_components(shapes.native_card(request, "t")["body"])
            )
        },
    ),
}


@pytest.mark.parametrize("platform", sorted(EMPTIED))
def test_a_field_the_person_emptied_reaches_the_agent_empty_not_as_its_default(platform: str) -> None:
    """A Slack input or a Feishu component emptied before submitting: the agent gets no value."""
    from clarigate.agent.protocol import normalize_request

    fields = [
        {"name": "notes", "default": "keep it small"},
        {"name": "count", "type": "number", "default": 3},
        {"name": "few", "type": "multi_select", "options": ["A", "B", "C"], "default": ["A"]},
        {"name": "when", "type": "date", "default": "2026-01-31"},
    ]
    request = normalize_request({"question": "Settings?", "fields": fields}, "call")
    check = check_form_values(request, EMPTIED[platform](request))
    assert check.ok, check.errors
    assert answer_with_form(request, check.values, None).values == {}
