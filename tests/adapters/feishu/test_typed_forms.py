"""A typed interrupt (``interrupt(value, response_schema=…)``) on Feishu: real lark-oapi against the
fake open API, a real LangGraph graph; the schema is a card form of native components, a value out
of bounds is refused at once (a toast, the card kept), one the schema rejects otherwise is asked
again with its error, and the graph is resumed with the schema's types."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import typed_graphs
from tests.agent.approval_tools import typed

from .cards import button, components, payload, text_of, walk
from .events import card_action, message_event

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


def _form_value(guests: str, name: str = "Ada") -> dict[str, Any]:
    """The card form as Feishu submits it (options by position, the date with its zone)."""
    return {
        "f1": name,
        "f2": guests,
        "f3": "12.5",
        "f4": True,
        "f5": "o3",
        "f6": "o2",
        "f7": ["o1", "o3"],
        "f8": "2026-12-01 +0800",
    }


async def _submit(bot: Any, message_id: str, card: dict[str, Any], guests: str) -> None:
    submit = payload(button(card, "Submit"))
    ok = await bot.click(
        card_action(submit, tag="button", form_value=_form_value(guests), message_id=message_id)
    )
    assert ok["toast"]["type"] == "success"
    await bot.gateway.drain()


async def test_a_typed_interrupt_is_a_card_form_refused_at_once_on_an_error_and_resumed_typed(
    make_bot: Any, runner: Any
) -> None:
    bot = await make_bot(runner)
    await bot.deliver(message_event("book a trip"))
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]
    assert "Book the trip" in text_of(card)
    tags = [c["tag"] for c in walk(card["body"]) if str(c.get("name", "")).startswith("f")]
    assert tags == [
        "input",
        "input",
        "input",
        "checker",
        "select_static",
        "select_static",
        "multi_select_static",
        "date_picker",
    ]
    guests = next(c for c in components(card, "input") if c["name"] == "f2")
    assert guests["default_value"] == "2"  # the schema's default

    submit = payload(button(card, "Submit"))
    refused = await bot.click(
        card_action(submit, tag="button", form_value=_form_value("20"), message_id=message_id)
    )
    assert refused["toast"] == {"type": "error", "content": "Guests: Must be at most 10"}  # le=10
    await bot.gateway.drain()
    assert list(bot.api.cards)[-1] == message_id  # the card kept, nothing asked again

    fraction = await bot.click(
        card_action(submit, tag="button", form_value=_form_value("2.5"), message_id=message_id)
    )
    assert fraction["toast"] == {"type": "error", "content": "Guests: Enter a whole number"}  # an int
    await bot.gateway.drain()
    assert list(bot.api.cards)[-1] == message_id and typed_graphs.RESUMED == []  # never resumed with it

    await _submit(bot, message_id, card, "4")
    assert [typed(v) for v in typed_graphs.RESUMED] == [typed(EXPECTED)]
    assert text_of(bot.api.shown()[-1]).startswith("Booked for Ada:")


async def test_an_answer_only_the_graphs_model_refuses_is_asked_again_with_its_error(
    make_bot: Any, checked_runner: Any
) -> None:
    bot = await make_bot(checked_runner)
    await bot.deliver(message_event("book a trip"))
    await bot.gateway.drain()
    message_id, card = list(bot.api.cards.items())[-1]
    submit = payload(button(card, "Submit"))
    ok = await bot.click(
        card_action(submit, tag="button", form_value=_form_value("4", name="Ada1"), message_id=message_id)
    )
    assert ok["toast"]["type"] == "success"  # within the bounds: a digit only the graph's model knows
    await bot.gateway.drain()
    assert typed_graphs.RESUMED == []
    again_id, again = list(bot.api.cards.items())[-1]
    assert again_id != message_id and "a name has no digits" in text_of(again)
    name = next(c for c in components(again, "input") if c["name"] == "f1")
    assert name["default_value"] == "Ada1"  # filled in as the person left it

    await _submit(bot, again_id, again, "4")
    [resumed] = typed_graphs.RESUMED
    assert resumed.name == "Ada" and resumed.guests == 4


async def test_a_form_too_big_for_a_card_is_asked_as_text_saying_so_and_a_typed_reply_answers(
    make_bot: Any,
) -> None:
    typed_graphs.RESUMED.clear()
    wide = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.typed_graphs:wide_choice")
    )
    try:
        bot = await make_bot(wide)
        await bot.deliver(message_event("pick"))
        await bot.gateway.drain()
        _, card = list(bot.api.cards.items())[-1]
        shown = text_of(card)
        assert "Too big for buttons or a form here, so this is asked as text." in shown
        assert "Pick your options" in shown and not components(card, "select_static")
        await bot.deliver(message_event("pick0: v0-3\npick5: 7"))  # a label, an option's number
        await bot.gateway.drain()
        assert typed_graphs.RESUMED == [{"pick0": "v0-3", "pick5": "v5-6"}]
    finally:
        await wide.aclose()
