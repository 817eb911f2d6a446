"""A declined answer (Cancel, a new message instead) resumes a typed interrupt only when its JSON
Schema takes the declined payload, checked as a person's answer to the schema's form is; else the
interrupt is not resumed (``Dismissed``): LangGraph itself checks only Pydantic, ``TypedDict`` and
dataclass schemas, and passes any value through a JSON Schema dict."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.interrupt_kinds import Dismissed
from clarigate.agent.interrupts import request_for, resume_value, superseded_value
from clarigate.agent.protocol import answer_declined
from clarigate.agent.supersede import resume_map
from clarigate.agent.typed_interrupts import schema_takes
from tests.agent.resume_graphs import REASON_SCHEMA
from tests.agent.typed_graphs import SCHEMA as BOOKING

DECLINED = {"kind": "human_input_response", "response_kind": "declined", "value": "(declined to answer)"}
REGION = {"enum": ["eu", "us"]}


@pytest.mark.parametrize(
    ("schema", "value", "takes"),
    [
        ({"type": "boolean"}, True, True),
        ({"type": "boolean"}, DECLINED, False),
        ({"type": "boolean"}, 1, False),
        (REGION, "us", True),
        (REGION, "(declined to answer)", False),
        (REGION, DECLINED, False),
        ({"type": "integer", "maximum": 10}, 4, True),
        ({"type": "integer", "maximum": 10}, 40, False),
        ({"type": "string"}, DECLINED, False),
        (REASON_SCHEMA, DECLINED, True),  # an object that names none of its keys and requires none
        ({**REASON_SCHEMA, "additionalProperties": False}, DECLINED, False),
        ({**REASON_SCHEMA, "required": ["reason"]}, DECLINED, False),
        ({**REASON_SCHEMA, "required": ["reason"]}, {**DECLINED, "reason": "cancelled"}, True),
        (BOOKING, DECLINED, False),
        ({"type": "array", "items": {"type": "object"}}, DECLINED, False),  # beyond a form: unchecked
    ],
)
def test_a_schema_takes_what_its_form_would_resume_with(schema: Any, value: Any, takes: bool) -> None:
    assert schema_takes(schema, value) is takes


def _declined_for(schema: Any, reason: Any = "cancelled") -> Any:
    request = request_for("i1", "Really deploy?", "en", schema)
    declined = answer_declined(request, None, reason)
    return resume_value("interrupt", "i1", "Really deploy?", declined, "en", schema)


def test_a_cancel_resumes_with_the_declined_payload_only_where_the_schema_takes_it() -> None:
    assert isinstance(_declined_for({"type": "boolean"}), Dismissed)
    assert isinstance(_declined_for(REGION), Dismissed)
    payload = _declined_for(REASON_SCHEMA)
    assert payload["response_kind"] == "declined" and payload["reason"] == "cancelled"


def test_a_new_message_resumes_a_typed_interrupt_with_the_declined_payload_or_not_at_all() -> None:
    assert isinstance(superseded_value("i1", "Which region?", "en", REGION), Dismissed)
    assert superseded_value("i1", "Why?", "en", REASON_SCHEMA)["reason"] == "superseded"
    assert superseded_value("i1", "Which region?", "en") == "(declined to answer)"  # untyped: its text
    pending = [("i1", "Which region?", REGION), ("i2", "Why?", REASON_SCHEMA), ("i3", "Name?", None)]
    resume, refused = resume_map(pending, "en")
    assert list(resume) == ["i2", "i3"] and refused == {}  # the enum's is left for the message to drop


@pytest.mark.parametrize(
    ("fields", "carried"),
    [
        ({"guests": {"type": "integer", "default": 2}}, False),  # a model defaulting every field
        ({"seat": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}}, False),
        ({"guests": {"type": "integer", "default": 2}, "response_kind": {"type": "string"}}, True),
        ({"guests": {"type": "integer", "default": 2}, "reason": {"type": "string"}}, True),
    ],
)
def test_a_cancel_resumes_only_a_schema_that_still_says_it_was_declined(fields: Any, carried: bool) -> None:
    """Pydantic rebuilds its model from the payload without the keys it does not name: a Cancel
    would come back as the model's defaults, a decision the person never made."""
    schema = {"title": "Confirm", "type": "object", "properties": fields}
    for taken in (schema, {**schema, "additionalProperties": True}):
        resumed = _declined_for(taken)
        if carried or taken.get("additionalProperties"):
            assert resumed["response_kind"] == "declined" and resumed["reason"] == "cancelled"
        else:
            assert isinstance(resumed, Dismissed)
            assert isinstance(superseded_value("i1", "Book?", "en", taken), Dismissed)


#: A hand-written JSON Schema dict, as ``interrupt(..., response_schema={...})`` passes it: no
#: ``title`` (Pydantic gives its models one), other keys allowed, the resume value not rebuilt.
PLAIN = {"type": "object", "properties": {"note": {"type": "string"}}}


def test_a_hand_written_schema_taking_other_keys_gets_the_declined_payload() -> None:
    """LangGraph passes a dict schema's resume value through as it is: the graph reads that the
    person declined, on a Cancel as on a new message instead of an answer."""
    cancelled = _declined_for(PLAIN)
    assert cancelled["response_kind"] == "declined" and cancelled["reason"] == "cancelled"
    superseded = superseded_value("i1", "Any note?", "en", PLAIN)
    assert superseded["response_kind"] == "declined" and superseded["reason"] == "superseded"
    resume, refused = resume_map([("i1", "Any note?", PLAIN)], "en")
    assert resume["i1"]["reason"] == "superseded" and refused == {}


@pytest.mark.parametrize(
    "schema",
    [
        {**PLAIN, "title": "Note"},  # what Pydantic makes of a model (TypedDict, dataclass) ``Note``
        {**PLAIN, "additionalProperties": False},  # says it takes no other key
    ],
)
def test_a_model_s_schema_or_one_refusing_other_keys_is_not_resumed_on_a_cancel(schema: Any) -> None:
    assert isinstance(_declined_for(schema), Dismissed)
    assert isinstance(superseded_value("i1", "Any note?", "en", schema), Dismissed)
