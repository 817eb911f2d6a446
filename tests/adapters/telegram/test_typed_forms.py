"""A typed interrupt (``interrupt(value, response_schema=…)``) on Telegram: real python-telegram-bot
against the fake Bot API, a real LangGraph graph; the schema is the step-by-step wizard, a value
out of bounds is asked again with its error, and the graph is resumed with the schema's types."""

from __future__ import annotations

from typing import Any

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import typed_graphs
from tests.agent.approval_tools import typed

from .harness import callback_update, message_update, open_bench

EXPECTED = typed_graphs.BOOKING_ANSWER


class Form:
    """The wizard of the latest question with a keyboard: taps and typing, and what it shows."""

    def __init__(self, tg: Any, bot_api: Any) -> None:
        self.tg, self.api = tg, bot_api
        sent = bot_api.of("sendMessage")
        index = max(i for i, c in enumerate(sent) if c.markup)
        self.question = sent[index].params["text"]
        self.message_id = 1000 + index
        self.token = sent[index].buttons[0][0]["callback_data"].split("|")[0]

    async def tap(self, *actions: str) -> None:
        for action in actions:
            await self.tg.deliver(callback_update(f"{self.token}|{action}", self.message_id))

    async def type(self, text: str) -> None:
        await self.tg.deliver(message_update(text))

    @property
    def shown(self) -> str:
        return str(self.api.of("editMessageText")[-1].params["text"])


async def test_a_typed_interrupt_is_the_wizard_asked_again_on_an_error_and_resumed_typed(
    bot_api: Any, tmp_path: Any
) -> None:
    typed_graphs.RESUMED.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.typed_graphs:booking")
    )
    store = MemoryStore(f"typed-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(message_update("book a trip"))
        form = Form(tg, bot_api)
        assert "Book the trip" in form.question
        await form.tap("form")
        assert "1/8 · Name" in form.shown and "As on the ticket" in form.shown
        await form.type("Ada")
        assert "2/8 · Guests" in form.shown and "→ 2" in form.shown  # the schema's default
        await form.type("20")
        assert "3/8 · Budget" in form.shown and "In euros" in form.shown
        await form.type("12.5")
        await form.tap("y")  # vip
        await form.tap("s3")  # color: blue
        await form.tap("k")  # size: keeps the schema's default, m
        await form.tap("t1", "t3", "d")  # extras: red, blue
        await form.type("2026-12-01")
        await form.tap("S")
        assert typed_graphs.RESUMED == []  # never resumed with a value the schema rejects

        again = Form(tg, bot_api)
        assert "Guests: Must be at most 10" in again.question
        await again.tap("form", "k")  # name: as given before
        assert "2/8 · Guests" in again.shown and "→ 20" in again.shown
        await again.type("4")
        await again.tap("k", "k", "k", "k", "k")
        await again.type("2026-12-01")
        await again.tap("S")
        assert [typed(v) for v in typed_graphs.RESUMED] == [typed(EXPECTED)]
        assert bot_api.of("sendMessage")[-1].params["text"].startswith("Booked for Ada:")
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
