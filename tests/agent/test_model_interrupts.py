"""A graph's own ``interrupt()`` whose value is a pydantic model or a dataclass: asked as the same
dict would be (its question, its options as buttons, its other fields as context), not as a
quoted repr, and resumed as that dict is (the answer's payload, a picked option's value)."""

from __future__ import annotations

import dataclasses
from typing import Any

from pydantic import BaseModel

from clarigate.agent.interrupts import INTERRUPT, asked_for, request_for, resume_value, superseded_value
from clarigate.agent.protocol import answer_declined, answer_with_option, answer_with_text


class RegionQuestion(BaseModel):
    question: str
    options: list[str]


@dataclasses.dataclass
class Review:
    question: str
    llm_output: str


@dataclasses.dataclass
class Choice:
    label: str
    value: Any


@dataclasses.dataclass
class Pick:
    question: str
    options: list[Choice]


REGION = RegionQuestion(question="Which region?", options=["eu-west", "us-east"])
REVIEW = Review(question="Is this SQL OK?", llm_output="DELETE FROM users WHERE id = 7")


def test_a_pydantic_interrupt_asks_its_question_with_its_options_as_buttons() -> None:
    request = asked_for("i-1", REGION).request

    assert request.question == "Which region?"
    assert [o.label for o in request.options] == ["eu-west", "us-east"]
    assert request == asked_for("i-1", REGION.model_dump()).request


def test_a_dataclass_interrupt_asks_its_question_and_shows_the_rest_as_context() -> None:
    request = request_for("i-2", REVIEW)

    assert request.question == "Is this SQL OK?"
    assert request.context == "DELETE FROM users WHERE id = 7"
    assert request == request_for("i-2", dataclasses.asdict(REVIEW))


def test_a_pick_resumes_a_pydantic_interrupt_as_the_same_dict_would_be() -> None:
    request = request_for("i-3", REGION)
    picked = answer_with_option(request, request.options[1].id, None)

    resumed = resume_value(INTERRUPT, "i-3", REGION, picked)

    assert isinstance(resumed, dict)
    assert (resumed["response_kind"], resumed["value"]) == ("option", "us-east")
    assert resumed == resume_value(INTERRUPT, "i-3", REGION.model_dump(), picked)


def test_nested_dataclass_options_resume_with_the_value_the_graph_gave_them() -> None:
    value = Pick(question="Cache?", options=[Choice("On", True), Choice("Off", False)])
    request = request_for("i-4", value)
    assert [o.label for o in request.options] == ["On", "Off"]

    resumed = resume_value(INTERRUPT, "i-4", value, answer_with_option(request, request.options[1].id, None))

    assert isinstance(resumed, dict)
    assert resumed["value"] is False


def test_a_typed_answer_and_a_superseded_one_resume_a_dataclass_interrupt_with_a_payload() -> None:
    request = request_for("i-5", REVIEW)

    typed = resume_value(INTERRUPT, "i-5", REVIEW, answer_with_text(request, "looks fine", None))
    superseded = superseded_value("i-5", REVIEW)

    assert isinstance(typed, dict) and typed["value"] == "looks fine"
    assert superseded == resume_value(INTERRUPT, "i-5", REVIEW, answer_declined(request, None, "superseded"))
    assert isinstance(superseded, dict) and superseded["response_kind"] == "declined"


def test_a_dataclass_interrupt_with_a_response_schema_asks_its_question_in_the_form() -> None:
    schema = {"type": "object", "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}

    request = asked_for("i-6", REVIEW, "en", schema).request

    assert (request.question, request.input_mode) == ("Is this SQL OK?", "form")
    assert request == asked_for("i-6", dataclasses.asdict(REVIEW), "en", schema).request
