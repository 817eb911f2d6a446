"""A typed interrupt (``interrupt(value, response_schema=…)``) on Slack: the real slack-bolt adapter
against the fake Slack, a real LangGraph graph; the schema is a modal of native inputs, a value
out of bounds is asked again with its error, and the graph is resumed with the schema's types."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent import typed_graphs
from tests.agent.approval_tools import typed

from .conftest import MakeWorld

EXPECTED = typed_graphs.BOOKING_ANSWER


@pytest.fixture
async def runner(booking_runner: Any) -> Any:
    return booking_runner


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

    response = await world.user.submit(modal, _state("20"))
    assert response.status_code == 200
    await world.settle()
    assert typed_graphs.RESUMED == []  # never resumed with a value the schema rejects
    again = world.fake.posted()
    assert "Guests: Must be at most 10" in json.dumps(again["blocks"])
    modal = await _open_form(world)
    inputs = [b for b in modal["blocks"] if b["type"] == "input"]
    assert inputs[0]["element"]["initial_value"] == "Ada"  # filled in as the person left it
    assert inputs[1]["element"]["initial_value"] == "20"

    response = await world.user.submit(modal, _state("4"))
    assert response.status_code == 200
    await world.settle()
    assert [typed(v) for v in typed_graphs.RESUMED] == [typed(EXPECTED)]
    assert world.fake.last_shown()["text"].startswith("Booked for Ada:")


async def test_a_field_the_person_emptied_is_asked_again_empty_not_with_its_default(
    make_world: MakeWorld, runner: Any
) -> None:
    world = await make_world(runner)
    await world.user.dm("book a trip")
    await world.settle()
    modal = await _open_form(world)
    guests = [b for b in modal["blocks"] if b["type"] == "input"][1]["element"]
    assert guests["initial_value"] == "2"  # the schema's default
    await world.user.submit(modal, _state(None, name="A"))  # Guests emptied, the name too short
    await world.settle()
    assert "Name: Use at least 2 characters" in json.dumps(world.fake.posted()["blocks"])
    modal = await _open_form(world)
    inputs = [b for b in modal["blocks"] if b["type"] == "input"]
    assert inputs[0]["element"]["initial_value"] == "A"  # filled in as the person left it
    assert "initial_value" not in inputs[1]["element"]  # emptied, so empty: not the default again

    await world.user.submit(modal, _state(None))
    await world.settle()
    [resumed] = typed_graphs.RESUMED
    assert "guests" not in resumed  # left to the graph's own default
