"""Graphs asking a yes-to-go-ahead typed interrupt whose Pydantic model has a default for every
field (or takes nothing but optional ones): LangGraph rebuilds the model from the resume value,
dropping keys it does not name, so a declined payload would come back as the defaults.

``confirm_booking`` books with what it is resumed with (``BOOKED``); ``confirm_seat`` asks for an
optional seat; ``confirm_or_decline`` names ``response_kind``, so it can tell a Cancel apart, as
``note_or_decline`` can (a hand-written JSON Schema dict, its resume value passed as it is).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel

BOOKED: list[Any] = []  # what each graph acted on


class Confirm(BaseModel):
    """How to book the table."""

    guests: int = 2
    notify: bool = True


class SeatChoice(BaseModel):
    """Any seat you prefer."""

    seat: str | None = None


class ConfirmOrDecline(BaseModel):
    """How to book the table; ``response_kind`` says when the person declined."""

    guests: int = 2
    response_kind: str = "form"
    reason: str | None = None


def _book(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the table?", response_schema=Confirm)
    BOOKED.append(answer)
    return {"messages": [AIMessage(content=f"Booked for {answer.guests}.")]}


def _seat(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the table?", response_schema=SeatChoice)
    BOOKED.append(answer)
    return {"messages": [AIMessage(content=f"Booked seat {answer.seat or 'any'}.")]}


def _book_unless_declined(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the table?", response_schema=ConfirmOrDecline)
    if answer.response_kind == "declined":
        return {"messages": [AIMessage(content=f"Not booked: {answer.reason}.")]}
    BOOKED.append(answer)
    return {"messages": [AIMessage(content=f"Booked for {answer.guests}.")]}


#: A hand-written JSON Schema dict: LangGraph passes its resume value through, other keys and all.
NOTE_SCHEMA = {"type": "object", "properties": {"note": {"type": "string"}}}


def _note(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Book the table?", response_schema=NOTE_SCHEMA)
    if answer.get("response_kind") == "declined":
        return {"messages": [AIMessage(content=f"Not booked: {answer.get('reason')}.")]}
    BOOKED.append(answer)
    return {"messages": [AIMessage(content=f"Booked ({answer.get('note', '')}).")]}


def _graph(node: Any) -> Any:
    return StateGraph(MessagesState).add_node("book", node).add_edge(START, "book").compile()


#: ``Confirm``: every field defaulted.
confirm_booking = _graph(_book)
#: ``SeatChoice``: every field optional.
confirm_seat = _graph(_seat)
#: ``ConfirmOrDecline``: names ``response_kind`` and ``reason``.
confirm_or_decline = _graph(_book_unless_declined)
#: ``NOTE_SCHEMA``: a plain dict, no ``title``, other keys allowed.
note_or_decline = _graph(_note)
