"""A typed interrupt (``interrupt(value, response_schema=…)``) on Telegram: real python-telegram-bot
against the fake Bot API, a real LangGraph graph; the schema is the step-by-step wizard, a value
out of bounds asked again at its step with the reason, and the graph is resumed with the schema's types."""

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


async def test_a_typed_interrupt_is_the_wizard_its_bounds_checked_at_each_step_and_resumed_typed(
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
        await form.type("A")  # too short: the step is asked again with the reason, at once
        assert "1/8 · Name" in form.shown and "⚠️ Use at least 2 characters" in form.shown
        await form.type("Ada")
        assert "2/8 · Guests" in form.shown and "→ 2" in form.shown  # the schema's default
        await form.type("20")  # out of range: asked again at this step, not after Submit
        assert "2/8 · Guests" in form.shown and "⚠️ Must be at most 10" in form.shown
        assert "→ 2" in form.shown  # the value it had is kept, not the one refused
        await form.type("2.5")  # an integer property: a whole number, said at this step
        assert "2/8 · Guests" in form.shown and "⚠️ Enter a whole number" in form.shown
        await form.type("4")
        assert "3/8 · Budget" in form.shown and "In euros" in form.shown
        await form.type("0")
        assert "3/8 · Budget" in form.shown and "⚠️ Must be more than 0" in form.shown
        await form.type("12.5")
        await form.tap("y")  # vip
        await form.tap("s3")  # color: blue
        await form.tap("k")  # size: keeps the schema's default, m
        await form.tap("t1", "t3", "d")  # extras: red, blue
        await form.type("2026-12-01")
        assert "• Name: Ada" in form.shown and "• Guests: 4" in form.shown  # earlier steps kept
        await form.tap("S")
        assert [typed(v) for v in typed_graphs.RESUMED] == [typed(EXPECTED)]  # sent once, in bounds
        assert not any("not accepted" in c.params["text"] for c in bot_api.of("sendMessage"))
        assert bot_api.of("sendMessage")[-1].params["text"].startswith("Booked for Ada:")
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
