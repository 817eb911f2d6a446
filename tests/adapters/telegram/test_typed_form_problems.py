"""A typed interrupt's form asked again with more problems than its question's context holds (a
protocol string: 200 characters), on Telegram: real python-telegram-bot against the fake Bot API,
a real LangGraph graph whose model rejects every field. The problems give way, counted ("…and 9
more"); the line saying the question is shown in full above (its text, too long for a question,
is the message right before it) always stays."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field, field_validator

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import MAX_STRING
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.typed_graphs import TRIP

from .harness import message_update, open_bench

SEATS = 12


class Seats(BaseModel):
    """A seat for each traveller."""

    seat_1: str = Field(title="Seat 1")
    seat_2: str = Field(title="Seat 2")
    seat_3: str = Field(title="Seat 3")
    seat_4: str = Field(title="Seat 4")
    seat_5: str = Field(title="Seat 5")
    seat_6: str = Field(title="Seat 6")
    seat_7: str = Field(title="Seat 7")
    seat_8: str = Field(title="Seat 8")
    seat_9: str = Field(title="Seat 9")
    seat_10: str = Field(title="Seat 10")
    seat_11: str = Field(title="Seat 11")
    seat_12: str = Field(title="Seat 12")

    @field_validator("*")
    @classmethod
    def _free(cls, seat: str) -> str:
        if seat.endswith("A"):  # only the graph knows: every window seat is taken
            raise ValueError("that seat is taken")
        return seat


def _ask(state: MessagesState) -> dict[str, Any]:
    answer = interrupt(TRIP, response_schema=Seats)
    return {"messages": [AIMessage(content=f"Seated: {answer.seat_1}")]}


#: Asks with a text longer than a question holds; LangGraph checks the answer with ``Seats``.
seats = StateGraph(MessagesState).add_node("ask", _ask).add_edge(START, "ask").compile()


def _context(question: str) -> str:
    """The question's context as the message shows it: the text before its bold question."""
    return re.split(r"\n\n<b>", question.split(" ", 1)[1], maxsplit=1)[0]


async def test_a_form_asked_again_with_every_field_wrong_keeps_its_shown_above_line(
    bot_api: Any, tmp_path: Any
) -> None:
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=f"{__name__}:seats"))
    store = MemoryStore(f"seats-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(message_update("seat us"))
        asked = [c for c in bot_api.of("sendMessage") if c.markup]
        above = catalog.text("text_above")
        assert len(asked) == 1 and _context(asked[0].params["text"]) == above

        # every field typed as `name: value` lines, every one a seat the graph refuses
        await tg.deliver(message_update("\n".join(f"seat_{i}: {i}A" for i in range(1, SEATS + 1))))
        again = [c for c in bot_api.of("sendMessage") if c.markup][-1]
        assert again is not asked[-1]
        context = _context(again.params["text"])
        assert len(context) <= MAX_STRING and context.endswith(f"\n{above}")
        problems = context.removesuffix(f"\n{above}")
        head = "The answer was not accepted: "
        assert problems.startswith(f"{head}Seat 1: Value error, that seat is taken; ")
        shown = problems.count("that seat is taken")
        more = catalog.text("typed_more", count=SEATS - shown)
        assert 1 <= shown < SEATS and problems.endswith(f"; {more}")
        before = bot_api.of("sendMessage")[-2].params["text"]  # the text in full, right above
        assert "Leg 6" in before and "<b>Who travels, and when?</b>" in again.params["text"]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
