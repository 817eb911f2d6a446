"""A typed interrupt asked as text (a schema beyond a form): the graph's rejection always says
why, the JSON example shows nested models in their shape and the allowed values of a choice, and
a one-field schema takes its value alone."""

from __future__ import annotations

import json
from typing import Literal, Optional

from pydantic import BaseModel, ValidationError, create_model

from clarigate.agent.interrupts import AskAgain, request_for, resume_value
from clarigate.agent.protocol import answer_with_text
from clarigate.agent.protocol.models import MAX_STRING
from clarigate.agent.typed_interrupts import rejected_asked

REGIONS = tuple(f"region-{i}" for i in range(60))


class Inner(BaseModel):
    x: int


class Outer(BaseModel):
    name: str
    inner: Inner
    spare: Optional[Inner] = None  # noqa: UP045 - Optional[...] as graphs write it


def test_the_graphs_rejection_of_a_17_field_answer_says_why() -> None:
    many = create_model("Many", **{f"field_{i}": (int, ...) for i in range(17)})  # type: ignore[call-overload]
    schema = many.model_json_schema()
    given = {"field_0": "q"}
    try:
        many.model_validate(given)
    except ValidationError as exc:
        error = str(exc)
    context = rejected_asked("i1", "Fill it in", schema, given, error, "en").request.context or ""
    assert len(context) <= MAX_STRING
    assert context.startswith("The answer was not accepted: field_0: Input should be a valid int")
    assert "reply with JSON like {" in context


def test_a_nested_model_example_is_its_shape_and_replying_it_is_accepted() -> None:
    schema = Outer.model_json_schema()
    request = request_for("i2", "Describe it", schema=schema)
    example = '{"name": "…", "inner": {"x": 0}, "spare": {"x": 0}}'
    assert example in (request.context or "")
    resumed = resume_value(
        "interrupt", "i2", "Describe it", answer_with_text(request, example, None), schema=schema
    )
    assert resumed == json.loads(example)
    assert Outer.model_validate(resumed).inner.x == 0  # the graph takes the example's shape


def test_a_literal_of_60_values_lists_them_and_takes_the_bare_value() -> None:
    pick = create_model("Pick", region=(Literal[REGIONS], ...))  # type: ignore[call-overload,valid-type]
    schema = pick.model_json_schema()
    request = request_for("i3", "Which region?", schema=schema)
    context = request.context or ""
    assert '{"region": "region-0"} (region: one of "region-0", "region-1", "region-2"' in context
    assert context.endswith("…") and len(context) <= MAX_STRING
    answer = answer_with_text(request, "region-42", None)
    resumed = resume_value("interrupt", "i3", "Which region?", answer, schema=schema)
    assert resumed == {"region": "region-42"} and pick.model_validate(resumed)
    wrong = resume_value("interrupt", "i3", "?", answer_with_text(request, "nowhere", None), schema=schema)
    assert isinstance(wrong, AskAgain) and "Reply with JSON." in (wrong.request.context or "")


def test_a_bare_value_is_not_taken_for_a_schema_of_several_fields() -> None:
    schema = Outer.model_json_schema()
    request = request_for("i4", "Describe it", schema=schema)
    again = resume_value("interrupt", "i4", "?", answer_with_text(request, "Ada", None), schema=schema)
    assert isinstance(again, AskAgain) and "Not valid JSON" in (again.request.context or "")
