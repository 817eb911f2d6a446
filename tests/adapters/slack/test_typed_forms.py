"""A typed interrupt (``interrupt(value, response_schema=…)``) on Slack: the real slack-bolt adapter
against the fake Slack, a real LangGraph graph; the schema is a modal of native inputs carrying its
bounds (``min_value`` / ``max_value``, ``min_length`` / ``max_length``), a value out of bounds is
refused under its field with the modal kept open, a value the schema rejects otherwise is asked
again with its error, and the graph is resumed with the schema's types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import typed_graphs
from tests.agent.approval_tools import typed

from .conftest import MakeWorld

EXPECTED = typed_graphs.BOOKING_ANSWER


@pytest.fixture
async def runner(booking_runner: Any) -> Any:
    return booking_runner


@pytest.fixture
async def checked_runner() -> Any:
    """The graph asking with ``CheckedBooking``: a name with a digit is refused by its model only."""
    typed_graphs.RESUMED.clear()
    made = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.typed_graphs:checked_booking")
    )
    yield made
    await made.aclose()


def _state(guests: str | None, name: str = "Ada") -> dict[str, Any]:
    """The modal's inputs as Slack submits them (options by position; an emptied input: None)."""
    return {
        "field-1": {"value": {"type": "plain_text_input", "value": name}},
        "field-2": {"value": {"type": "number_input", "value": guests}},
        "field-3": {"value": {"type": "number_input", "value": "12.5"}},
        "field-4": {"value": {"type": "checkboxes", "selected_options": [{"value": "true"}]}},
        "field-5": {"value": {"type": "static_select", "selected_option": {"value": "3"}}},
        "field-6": {"value": {"type": "static_select", "selected_option": {"value": "2"}}},
        "field-7": {"value": {"type": "checkboxes", "selected_options": [{"value": "1"}, {"value": "3"}]}},
        "field-8": {"value": {"type": "datepicker", "selected_date": "2026-12-01"}},
    }


def _budget(value: str) -> dict[str, Any]:
    return {"field-3": {"value": {"type": "number_input", "value": value}}}


async def _open_form(world: Any) -> dict[str, Any]:
    question = world.fake.posted()
    await world.user.click(question, "clarigate:form")
    await world.adapter.idle()  # the modal opens beside the ack
    return world.fake.of("views.open")[-1]["view"]


async def test_a_typed_interrupt_is_a_modal_asked_again_on_an_error_and_resumed_typed(
    make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner)
    await world.user.dm("book a trip")
    await world.settle()
    assert "Book the trip" in json.dumps(world.fake.posted()["blocks"])
    modal = await _open_form(world)
    inputs = [b for b in modal["blocks"] if b["type"] == "input"]
    assert [b["element"]["type"] for b in inputs] == [
        "plain_text_input",
        "number_input",
        "number_input",
        "checkboxes",
        "static_select",
        "static_select",
        "checkboxes",
        "datepicker",
    ]
    assert [b["label"]["text"] for b in inputs][:3] == ["Name *", "Guests", "Budget *"]
    assert inputs[1]["element"]["initial_value"] == "2"  # the schema's default
    assert inputs[1]["element"]["placeholder"]["text"] == "1 to 10"
    # the schema's bounds, for Slack to tell the person as they type (ge=1, le=10; min_length=2)
    assert (inputs[1]["element"]["min_value"], inputs[1]["element"]["max_value"]) == ("1", "10")
    assert inputs[0]["element"]["min_length"] == 2 and "max_length" not in inputs[0]["element"]
    assert "min_value" not in inputs[2]["element"]  # gt=0 of a decimal: no min_value says it

    asked = len(world.fake.of("chat.postMessage"))
    response = await world.user.submit(modal, _state("20"))  # past max_value, as a client lets through
    assert response.json() == {"response_action": "errors", "errors": {"field-2": "Must be at most 10"}}
    response = await world.user.submit(modal, _state("2") | _budget("0"))
    assert response.json() == {"response_action": "errors", "errors": {"field-3": "Must be more than 0"}}
    await world.settle()
    assert typed_graphs.RESUMED == [] and len(world.fake.of("chat.postMessage")) == asked  # kept open

    # an integer property: the input takes no decimals, and one a client lets through is refused
    assert inputs[1]["element"]["is_decimal_allowed"] is False and inputs[2]["element"]["is_decimal_allowed"]
    response = await world.user.submit(modal, _state("2.5"))
    assert response.json() == {"response_action": "errors", "errors": {"field-2": "Enter a whole number"}}
    await world.settle()
    assert typed_graphs.RESUMED == []  # never resumed with a value the schema rejects

    response = await world.user.submit(modal, _state("4"))
    assert response.status_code == 200
    await world.settle()
    assert [typed(v) for v in typed_graphs.RESUMED] == [typed(EXPECTED)]
    assert world.fake.last_shown()["text"].startswith("Booked for Ada:")


async def test_a_field_the_person_emptied_is_asked_again_empty_not_with_its_default(
    make_world: MakeWorld, checked_runner: Any
) -> None:
    world = await make_world(checked_runner)
    await world.user.dm("book a trip")
    await world.settle()
    modal = await _open_form(world)
    guests = [b for b in modal["blocks"] if b["type"] == "input"][1]["element"]
    assert guests["initial_value"] == "2"  # the schema's default
    response = await world.user.submit(modal, _state(None, name="A"))  # Guests emptied, the name too short
    assert response.json() == {
        "response_action": "errors",
        "errors": {"field-1": "Use at least 2 characters"},
    }
    await world.user.submit(modal, _state(None, name="Ada1"))  # a digit: only the graph's model knows
    await world.settle()
    assert "a name has no digits" in json.dumps(world.fake.posted()["blocks"])
    modal = await _open_form(world)
    inputs = [b for b in modal["blocks"] if b["type"] == "input"]
    assert inputs[0]["element"]["initial_value"] == "Ada1"  # filled in as the person left it
    assert "initial_value" not in inputs[1]["element"]  # emptied, so empty: not the default again

    await world.user.submit(modal, _state(None))
    await world.settle()
    [resumed] = typed_graphs.RESUMED
    assert resumed.name == "Ada" and "guests" not in resumed.model_fields_set  # the graph's own default
