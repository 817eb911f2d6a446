"""Typed interrupts (``response_schema``) as forms, their answers in the schema's types, what a
form cannot ask as text, a declined answer the graph refuses closed, never asked again; and an
approval's "Reply instead" and description."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver
from pydantic import BaseModel

from clarigate.agent.graph import approval_config
from clarigate.agent.interrupts import (
    AskAgain,
    Dismissed,
    asked_for,
    parse_request_id,
    request_for,
    resume_checked,
    resume_value,
)
from clarigate.agent.protocol import (
    answer_declined,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    catalog,
    parse_typed_reply,
    render_text_fallback,
)
from clarigate.agent.protocol.models import MAX_STRING
from clarigate.agent.typed_interrupts import rejected_asked, validation_problems
from tests.agent.typed_graphs import SCHEMA, TRIP, CheckedBooking, checked_booking

GOOD = {
    "name": "Ada",
    "guests": 3,
    "budget": 12,
    "vip": True,
    "color": "blue",
    "size": "l",
    "extras": ["red", "blue"],
    "day": "2026-12-01",
}


def _typed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


def test_every_supported_type_is_a_native_field_with_its_title_default_and_bounds() -> None:
    request = request_for("i1", "Book the trip", schema=SCHEMA)
    assert request.request_id == "interrupt:i1" and request.input_mode == "form"
    assert request.question == "Book the trip"
    shown = [(f.name, f.label, f.type, f.required, f.default) for f in request.fields]
    assert shown == [
        ("name", "Name", "text", True, None),
        ("guests", "Guests", "number", False, 2),
        ("budget", "Budget", "number", True, None),
        ("vip", "Vip", "checkbox", False, False),
        ("color", "Color", "select", True, None),  # a $ref to the enum in $defs
        ("size", "Size", "select", False, "m"),
        ("extras", "Extras", "multi_select", False, None),
        ("day", "Day", "date", True, None),
    ]
    assert request.fields[0].placeholder == "As on the ticket"
    assert request.fields[1].placeholder == "1 to 10"
    assert [o.label for o in request.fields[4].options] == ["red", "green", "blue"]


def test_a_form_answer_resumes_with_the_schema_keys_and_types() -> None:
    request = request_for("i1", "Book the trip", schema=SCHEMA)
    value = resume_value(
        "interrupt", "i1", "Book the trip", answer_with_form(request, GOOD, None), schema=SCHEMA
    )
    assert _typed(value) == _typed({**GOOD, "budget": 12.0})  # a JSON Schema number is a float


def test_an_answer_breaking_a_bound_is_asked_again_with_the_error_and_the_fields_as_filled() -> None:
    request = request_for("i1", "Book the trip", schema=SCHEMA)
    bad = {**GOOD, "guests": 20, "name": "A"}
    again = resume_value("interrupt", "i1", "Book", answer_with_form(request, bad, None), schema=SCHEMA)
    assert isinstance(again, AskAgain)
    assert again.request.request_id == "interrupt:i1#1"  # an id of its own: a new answer
    assert "Name: Use at least 2 characters; Guests: Must be at most 10" in (again.request.context or "")
    assert [f.default for f in again.request.fields][:3] == ["A", 20, 12]


def test_a_whole_number_and_a_bound_in_chinese() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "title": "人数", "exclusiveMinimum": 0}},
    }
    request = request_for("i2", "几个人？", schema=schema)
    assert request.locale == "zh"
    again = resume_value(
        "interrupt", "i2", "几个人？", answer_with_form(request, {"n": 2.5}, None), schema=schema
    )
    assert isinstance(again, AskAgain) and "人数：请输入整数" in (again.request.context or "")
    again = resume_value(
        "interrupt", "i2", "几个人？", answer_with_form(request, {"n": 0}, None), schema=schema
    )
    assert isinstance(again, AskAgain) and "必须大于 0" in (again.request.context or "")


def test_a_bare_value_schema_is_one_field_resumed_with_the_value_alone() -> None:
    schema = {"type": "integer", "minimum": 1}
    request = request_for("i3", "How many?", schema=schema)
    assert [f.type for f in request.fields] == ["number"]
    reply = parse_typed_reply(request, "4", None).response
    assert reply is not None
    value = resume_value("interrupt", "i3", "How many?", reply, schema=schema)
    assert _typed(value) == ("int", 4)


def test_a_typed_text_reply_fills_the_form() -> None:
    request = request_for("i1", "Book the trip", schema=SCHEMA)
    lines = "name: Ada\nbudget: 12.5\ncolor: green\nextras: red, green\nday: 2026/12/1"
    reply = parse_typed_reply(request, lines, None).response
    assert reply is not None
    value = resume_value("interrupt", "i1", "Book", reply, schema=SCHEMA)
    assert _typed(value) == _typed(
        {
            "name": "Ada",
            "guests": 2,
            "budget": 12.5,
            "vip": False,
            "color": "green",
            "size": "m",
            "extras": ["red", "green"],
            "day": "2026-12-01",
        }
    )


def test_enum_values_of_other_types_come_back_as_themselves() -> None:
    schema = {"type": "object", "properties": {"level": {"enum": [1, 2, 3]}, "ok": {"enum": [True, False]}}}
    request = request_for("i4", "?", schema=schema)
    value = resume_value(
        "interrupt", "i4", "?", answer_with_form(request, {"level": "2", "ok": "false"}, None), schema=schema
    )
    assert _typed(value) == _typed({"level": 2, "ok": False})


def test_a_schema_beyond_a_form_is_asked_as_text_saying_so_and_the_reply_is_json() -> None:
    schema = {
        "type": "object",
        "properties": {"who": {"type": "string"}, "stops": {"type": "array", "items": {"type": "object"}}},
    }
    request = request_for("i5", "Plan the route", schema=schema)
    assert request.input_mode == "free_text"
    assert "cannot be asked as a form here (`stops`)" in (request.context or "")
    assert '{"who": "…", "stops": [{}]}' in (request.context or "")
    assert "cannot be asked as a form" in render_text_fallback(request)
    again = resume_value("interrupt", "i5", "Plan", answer_with_text(request, "who: me", None), schema=schema)
    assert isinstance(again, AskAgain) and "Not valid JSON" in (again.request.context or "")
    text = '{"who": "me", "stops": [{"at": "Lyon"}]}'
    assert resume_value(
        "interrupt", "i5", "Plan", answer_with_text(request, text, None), schema=schema
    ) == json.loads(text)


def test_more_choices_than_a_form_holds_is_asked_as_text() -> None:
    schema = {"type": "object", "properties": {"city": {"enum": [f"c{i}" for i in range(30)]}}}
    request = request_for("i6", "Which city?", schema=schema)
    assert request.input_mode == "free_text"
    assert "more fields or choices than a form holds" in (request.context or "")


def test_the_graphs_own_rejection_is_shown_by_field_with_the_answer_filled_in() -> None:
    schema = CheckedBooking.model_json_schema()
    error = ""
    try:
        CheckedBooking.model_validate({**GOOD, "name": "Ada1"})
    except ValueError as exc:
        error = str(exc)
    assert validation_problems(error) == [("name", "Value error, a name has no digits")]
    request = rejected_asked("i7", "Book", schema, {**GOOD, "name": "Ada1"}, error, "en").request
    assert "The answer was not accepted: Name: Value error, a name has no digits" in (request.context or "")
    assert request.fields[0].default == "Ada1" and request.fields[4].default == "blue"


def test_a_text_form_asked_again_with_many_problems_keeps_how_to_answer_and_the_shown_above_line() -> None:
    """Asked as text (a schema beyond a form) with a text too long for a question, then rejected
    by the graph on every field: the problems past the first give way, counted; the line saying
    the question is shown in full above and the one saying how to answer stay (its example may
    shorten to leave the first problem its room)."""

    class Route(BaseModel):
        stops: list[dict[str, Any]]
        legs: list[int]

    schema = Route.model_json_schema()
    first = asked_for("i8", TRIP, schema=schema)
    assert first.in_full is not None and first.request.input_mode == "free_text"
    above, how = (first.request.context or "").split("\n")
    assert above == catalog.text("text_above") and "reply with JSON like" in how
    given = {"stops": [], "legs": ["soon"] * 10}
    error = ""
    try:
        Route.model_validate(given)
    except ValueError as exc:
        error = str(exc)
    again = rejected_asked("i8", TRIP, schema, given, error, "en")
    context = again.request.context or ""
    problems, shown_above, how_again = context.split("\n")
    lead = how.split("like ")[0]
    assert len(context) <= MAX_STRING and shown_above == above and how_again.startswith(f"{lead}like {{")
    head = "The answer was not accepted: legs: Input should be a valid"
    *shown, more = problems.split("; ")
    assert problems.startswith(head) and 1 <= len(shown) < 10
    assert more == catalog.text("typed_more", count=10 - len(shown))
    assert again.in_full == first.in_full  # the text in full, above it again


HITL = {
    "action_requests": [
        {"name": "send_email", "args": {"to": "a@b.c"}, "description": "Check the recipient first"}
    ],
    "review_configs": [{"action_name": "send_email", "allowed_decisions": ["approve", "reject", "respond"]}],
}


def test_an_approval_shows_the_description_and_offers_reply_instead_when_allowed() -> None:
    request = request_for("h1", HITL)
    assert [o.label for o in request.options] == ["Approve", "Reject", "Reply instead"]
    assert (request.context or "").startswith("Check the recipient first\n`send_email(")
    reply = resume_value("approval", "h1", HITL, answer_with_option(request, request.options[2].id, None))
    assert isinstance(reply, AskAgain) and reply.request.request_id == "approval-respond:h1"
    answer = answer_with_text(reply.request, "Already sent it myself.", None)
    decided = resume_value("approval-respond", "h1", HITL, answer)
    assert decided == {"decisions": [{"type": "respond", "message": "Already sent it myself."}]}


def test_a_per_call_approval_reads_its_allowed_decisions_from_the_response_schema() -> None:
    value = {
        "type": "tool_approval",
        "name": "send_email",
        "args": {"to": "a"},
        "description": "Tool execution requires approval\n\nTool: send_email",
    }
    schema = {
        "discriminator": {"mapping": {"approve": "#/a", "respond": "#/r"}, "propertyName": "type"},
        "oneOf": [],
    }
    request = request_for("h2", value, schema=schema)
    assert [o.label for o in request.options] == ["Approve", "Reply instead"]
    assert request.context == '`send_email(to="a")`'  # the middleware's default description says no more


def test_a_question_asked_again_keeps_its_interrupt_and_kind() -> None:
    assert parse_request_id("interrupt:i1#2") == ("interrupt", "i1")
    assert parse_request_id("approval-respond:h1") == ("approval-respond", "h1")


def test_require_approval_may_allow_respond_and_true_still_means_the_first_three() -> None:
    config = approval_config({"send_email": ["approve", "respond"], "drop": True})
    assert config == {
        "send_email": {"allowed_decisions": ["approve", "respond"]},
        "drop": {"allowed_decisions": ["approve", "edit", "reject"]},
    }


async def test_a_declined_answer_the_graph_refuses_is_dismissed_a_real_one_asked_again() -> None:
    graph = checked_booking.builder.compile(checkpointer=InMemorySaver())
    config: dict[str, Any] = {"configurable": {"thread_id": "t-declined"}}
    await graph.ainvoke({"messages": []}, config)
    [asked] = (await graph.aget_state(config)).interrupts
    request = request_for(asked.id, asked.value, schema=asked.response_schema)

    def run(command: Any) -> Any:
        return graph.ainvoke(command, config)

    declined = answer_declined(request, None)
    value = resume_value("interrupt", asked.id, asked.value, declined, schema=asked.response_schema)
    assert isinstance(await resume_checked(run, asked, value, declined, "en"), Dismissed)
    assert [i.id for i in (await graph.aget_state(config)).interrupts] == [asked.id]  # still pending

    bad = answer_with_form(request, {**GOOD, "name": "Ada1"}, None)
    value = resume_value("interrupt", asked.id, asked.value, bad, schema=asked.response_schema)
    again = await resume_checked(run, asked, value, bad, "en")
    assert isinstance(again, AskAgain) and "a name has no digits" in (again.request.context or "")


def test_an_integer_propertys_field_carries_multiple_of_one_in_its_bounds() -> None:
    request = request_for("i1", "Book the trip", schema=SCHEMA)
    assert request.fields[1].bounds == {"minimum": 1, "maximum": 10, "multipleOf": 1}  # guests: int
    assert request.fields[2].bounds is not None and "multipleOf" not in request.fields[2].bounds
    assert request.fields[0].bounds is not None and "multipleOf" not in request.fields[0].bounds
