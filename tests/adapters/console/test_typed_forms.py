"""A typed interrupt (``response_schema``) in the terminal: the console chat against the real core
and a real LangGraph graph asking ``interrupt(value, response_schema=…)``; the form is asked field by
field with typed parsing, a value out of bounds is asked again with its error, and the graph is
resumed with exactly the schema's types."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from tests.agent import typed_graphs
from tests.agent.approval_tools import typed

from .console_bot import ConsoleBot


class Terminal(ConsoleBot):
    """The bot with the console adapter on the ``booking`` graph; ``chat`` types lines."""

    def __init__(self, runner: asyncio.Runner) -> None:
        graph = "tests.agent.typed_graphs:booking"
        super().__init__(runner, LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=graph)))


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    typed_graphs.RESUMED.clear()
    with asyncio.Runner() as runner:
        made = Terminal(runner)
        yield made
        runner.run(made.gateway.stop(grace=0))
        runner.run(made.agent.aclose())


# name, guests, budget, vip, color, size, extras, day: in the schema's order
FIRST = ["Ada", "20", "12.5", "yes", "blue", "", "red, blue", "2026-12-01"]


def test_the_form_is_asked_typed_an_error_asks_again_and_the_graph_gets_the_schemas_types(
    terminal: Terminal,
) -> None:
    printed = terminal.chat("book a trip", *FIRST[:2], "4", *FIRST[2:])
    assert "Book the trip" in printed
    # the schema's bound checked as the field is typed: that field alone asked again, with its error
    assert "  Guests [a number] (now 2; Enter keeps it): 20\n  ! Must be at most 10\n" in printed
    assert printed.count("  Name (required): ") == 1
    assert typed_graphs.RESUMED and len(typed_graphs.RESUMED) == 1, printed
    assert typed(typed_graphs.RESUMED[0]) == typed(typed_graphs.BOOKING_ANSWER)
    assert "Booked for Ada:" in printed


def test_a_fields_description_and_range_are_shown_before_it_is_asked(terminal: Terminal) -> None:
    printed = terminal.chat("book a trip", "Ada", "many", "4")

    # what the schema says of a field (its description, its bounds), as a form shows it in its hint
    assert "  · As on the ticket\n  Name (required): " in printed
    assert "  · 1 to 10\n  Guests [a number] (now 2; Enter keeps it): " in printed
    assert "  · In euros\n  Budget (required) [a number]: " in printed
    assert printed.count("  · 1 to 10") == 1  # once a field: not again with its error ("many")
    assert printed.count("Guests [a number]") == 2
