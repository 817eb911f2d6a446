"""A form field's bounds (``FormField.bounds``) as its modal input's own: ``min_value`` /
``max_value`` on a number input and ``min_length`` / ``max_length`` on a text input, for Slack to
tell the person as they type, only where Slack documents them (lengths 0 to 3,000, ``max_length``
at least 1) and where the value shown fits them; what Slack cannot say (an exclusive bound of a
decimal input, an optional field's minimum length) is refused under the field at submit."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.slack.modals import field_block_id, modal_metadata, out_of_bounds, render_form_modal
from clarigate.adapters.testing import form_request
from clarigate.agent.protocol import FormField

from .fake_views import view_problems


def _element(field: FormField) -> dict[str, Any]:
    modal = render_form_modal(form_request("Book?", [field]), modal_metadata("tok", "C1", "1.2"))
    return next(b for b in modal["blocks"] if b["type"] == "input")["element"]


def test_a_numbers_range_is_the_number_inputs_own() -> None:
    guests = FormField(name="guests", label="Guests", type="number", bounds={"minimum": 1, "maximum": 10})
    element = _element(guests)
    assert (element["min_value"], element["max_value"], element["is_decimal_allowed"]) == ("1", "10", True)
    assert _element(guests.model_copy(update={"bounds": {"minimum": 0.5}}))["min_value"] == "0.5"
    assert (
        _element(guests.model_copy(update={"bounds": {"maximum": 1e20}}))["max_value"]
        == "100000000000000000000"
    )
    for unsaid in ({"exclusiveMinimum": 0}, {"minimum": 5, "maximum": 1}, {"maximum": float("inf")}):
        element = _element(guests.model_copy(update={"bounds": unsaid}))
        assert "min_value" not in element and "max_value" not in element
    shown_outside = _element(guests.model_copy(update={"default": 20}))  # asked again as given
    assert shown_outside["initial_value"] == "20" and "max_value" not in shown_outside


def test_a_texts_length_is_the_text_inputs_own_within_slacks_limits() -> None:
    title = FormField(name="title", label="Title", required=True, bounds={"minLength": 2, "maxLength": 8})
    element = _element(title)
    assert (element["min_length"], element["max_length"]) == (2, 8)
    assert "min_length" not in _element(title.model_copy(update={"required": False}))  # empty: no answer
    assert "max_length" not in _element(title.model_copy(update={"bounds": {"maxLength": 5000}}))
    assert _element(title.model_copy(update={"type": "textarea"}))["max_length"] == 8
    too_long = _element(title.model_copy(update={"default": "A much longer title"}))
    assert too_long["initial_value"] == "A much longer title" and "max_length" not in too_long


def test_a_submit_outside_the_bounds_is_refused_under_each_field() -> None:
    fields = [
        FormField(name="title", label="Title", bounds={"minLength": 3}),
        FormField(name="budget", label="Budget", type="number", bounds={"exclusiveMinimum": 0}),
        FormField(name="notes", label="Notes", type="textarea", bounds={"minLength": 3}),
    ]
    request = form_request("Book?", fields)
    state = {
        field_block_id(0): {"value": {"type": "plain_text_input", "value": "ab"}},
        field_block_id(1): {"value": {"type": "number_input", "value": "0"}},
        field_block_id(2): {"value": {"type": "plain_text_input", "value": None}},  # left empty: fine
    }
    assert out_of_bounds(request, state) == {
        "field-1": "Use at least 3 characters",
        "field-2": "Must be more than 0",
    }
    state[field_block_id(0)]["value"]["value"] = "abc"
    state[field_block_id(1)]["value"]["value"] = "0.01"
    assert out_of_bounds(request, state) == {}


def test_a_whole_numbers_input_takes_no_decimals_and_its_exclusive_bounds_inclusive() -> None:
    # an integer property's field: its bounds carry ``multipleOf`` 1 (``typed_interrupts``)
    guests = FormField(
        name="guests", label="Guests", type="number", bounds={"exclusiveMinimum": 0, "multipleOf": 1}
    )

    def range_of(**bounds: float) -> tuple[str | None, str | None]:
        element = _element(guests.model_copy(update={"bounds": {**bounds, "multipleOf": 1}}))
        return element.get("min_value"), element.get("max_value")

    element = _element(guests)
    assert (element["is_decimal_allowed"], element["min_value"]) == (
        False,
        "1",
    ) and "max_value" not in element
    assert range_of(minimum=0.5, exclusiveMaximum=10.5) == ("1", "10")  # whole, as Slack needs them
    assert range_of(minimum=2, exclusiveMinimum=2, maximum=9, exclusiveMaximum=9) == ("3", "8")
    assert range_of(exclusiveMinimum=1, exclusiveMaximum=2) == (None, None)  # no whole number between
    assert _element(guests.model_copy(update={"bounds": {"minimum": 1}}))["is_decimal_allowed"] is True
    asked_again = _element(guests.model_copy(update={"default": 2.5}))  # the refused value, as given
    assert (asked_again["initial_value"], asked_again["is_decimal_allowed"]) == ("2.5", True)


def test_a_whole_numbers_integral_default_is_shown_without_a_decimal_point() -> None:
    # a schema's ``"default": 3.0`` on an integer property, or "3.0" typed and asked again
    replicas = FormField(
        name="replicas", label="Replicas", type="number", default=3.0, bounds={"minimum": 1, "multipleOf": 1}
    )
    request = form_request("Scale?", [replicas])
    modal = render_form_modal(request, modal_metadata("tok", "C1", "1.2"))
    element = next(b for b in modal["blocks"] if b["type"] == "input")["element"]
    assert (element["initial_value"], element["is_decimal_allowed"], element["min_value"]) == (
        "3",
        False,
        "1",
    )
    assert view_problems(modal) == []  # views.open takes it: no decimal in a whole input
    assert _element(replicas.model_copy(update={"default": -1e20}))["initial_value"] == "-" + "1" + "0" * 20
