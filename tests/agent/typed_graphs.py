"""Graphs asking typed interrupts (``interrupt(value, response_schema=…)``), for the typed-form tests.

``booking`` hands the schema over as JSON Schema (LangGraph passes the answer through as it came,
so a test sees exactly what the gateway resumed with); ``checked_booking`` hands over the Pydantic
model itself, so LangGraph checks the answer (a name with a digit fails its own validator, which
no schema shows) and the graph gets the model.
"""

from __future__ import annotations

import datetime as dt
import enum
import json
from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field, field_validator

RESUMED: list[Any] = []  # what each interrupt() returned
#: What ``booking`` resumes with when every platform's form is filled in as the tests fill it.
BOOKING_ANSWER = {
    "name": "Ada",
    "guests": 4,
    "budget": 12.5,
    "vip": True,
    "color": "blue",
    "size": "m",
    "extras": ["red", "blue"],
    "day": "2026-12-01",
}


class Color(enum.StrEnum):
    red = "red"
    green = "green"
    blue = "blue"


class Booking(BaseModel):
    """Who travels, when, and how."""

    # every field type a form asks: text, integer, number, boolean, enum, array of enums, date

    name: str = Field(title="Name", description="As on the ticket", min_length=2)
    guests: int = Field(default=2, ge=1, le=10)
    budget: float = Field(gt=0, description="In euros")
    vip: bool = False
    color: Color
    size: Literal["s", "m", "l"] = "m"
    extras: list[Color] = []
    day: dt.date


class CheckedBooking(Booking):
    """Who travels, when, and how."""

    # ``Booking`` with a check only the graph knows

    @field_validator("name")
    @classmethod
    def _no_digits(cls, name: str) -> str:
        if any(c.isdigit() for c in name):
            raise ValueError("a name has no digits")
        return name


SCHEMA: dict[str, Any] = Booking.model_json_schema()


def _book(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the trip", response_schema=SCHEMA)
    RESUMED.append(answer)
    # the answer as JSON too: a test on a server reads its types from the reply (4 is not 4.0)
    return {
        "messages": [AIMessage(content=f"Booked for {answer['name']}: {json.dumps(answer, sort_keys=True)}")]
    }


def _checked(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the trip", response_schema=CheckedBooking)
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"Booked for {answer.name}.")]}


def _graph(node: Any) -> Any:
    return StateGraph(MessagesState).add_node("book", node).add_edge(START, "book").compile()


#: Asks with a JSON Schema dict; resumed as the gateway sent it.
booking = _graph(_book)
#: Asks with the Pydantic model; LangGraph checks the answer and returns the model.
checked_booking = _graph(_checked)

#: What ``long_booking`` asks: a trip of a few lines, longer than a question holds (200
#: characters), ending in its question.
TRIP = (
    "Here is the trip I found.\n"
    + "\n".join(f"Leg {i}: train {i}0{i} from stop {i} to stop {i + 1}, coach {i}." for i in range(1, 7))
    + "\nWho travels, and when?"
)


def _long(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(TRIP, response_schema=CheckedBooking)
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"Booked for {answer.name}.")]}


#: Asks with a text longer than a question holds, and the Pydantic model.
long_booking = _graph(_long)


class Seat(BaseModel):
    """A model of the graph's own, not the question's."""

    number: int


def _own_check_fails(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the trip", response_schema=CheckedBooking)
    RESUMED.append(answer)
    Seat.model_validate({"number": "by the window"})  # the graph's own bug, once the answer is taken
    return {"messages": [AIMessage(content=f"Booked for {answer.name}.")]}


#: Takes a good answer, then fails on a validation error of its own model (no fault of the answer).
booking_then_own_check = _graph(_own_check_fails)


DELETED: list[str] = []  # what ``drop_rows`` really did


def drop_rows(table: str) -> str:
    """Drop every row of ``table``."""
    DELETED.append(table)
    return f"dropped {table}"


def make_reviewed_agent(checkpointer: Any) -> Any:
    """An operator's own ``create_agent`` whose ``drop_rows`` is reviewed by LangChain's
    ``HumanInTheLoopMiddleware`` with a description and the ``respond`` decision allowed."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

    call = {"name": "drop_rows", "args": {"table": "users"}}
    model = ScriptedChatModel(
        turns=[ScriptedTurn.model_validate({"tool_calls": [call]}), ScriptedTurn(content="Noted.")]
    )
    review = {
        "drop_rows": {
            "allowed_decisions": ["approve", "reject", "respond"],
            "description": "Dropping rows cannot be undone.",
        }
    }
    return create_agent(
        model, tools=[drop_rows], middleware=[HumanInTheLoopMiddleware(review)], checkpointer=checkpointer
    )


#: Twelve choices of twenty options each: a form the protocol holds, more options than a Feishu
#: card holds (200 components).
WIDE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {f"pick{n}": {"enum": [f"v{n}-{i}" for i in range(20)]} for n in range(12)},
    "required": ["pick0"],
}


def _wide(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Pick your options", response_schema=WIDE_SCHEMA)
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"Picked {json.dumps(answer, sort_keys=True)}")]}


#: Asks a form too wide for a Feishu card.
wide_choice = _graph(_wide)
