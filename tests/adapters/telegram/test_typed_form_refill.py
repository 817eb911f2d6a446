"""A typed interrupt's form on Telegram's step-by-step form, asked again or emptied: "⌫ Clear" is
offered on a value the person gave before (the form asked again) where the graph has no default to
take again, and a multi-select emptied by the person resumes the graph with nothing chosen, as the
summary shows, not with the graph's default. Real python-telegram-bot against the fake Bot API,
a real LangGraph graph resumed with what the gateway sent."""

from __future__ import annotations

import json
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.typed_graphs import Color

from . import test_typed_form_defaults as defaults
from .harness import message_update, open_bench
from .test_typed_forms import Form

RESUMED: list[Any] = []


class Paint(BaseModel):
    """What to paint."""

    colors: list[Color] = Field([Color.red], description="Pick any")


def _paint(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Paint it", response_schema=Paint.model_json_schema())
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"Painted: {json.dumps(answer, sort_keys=True)}")]}


paint = StateGraph(MessagesState).add_node("paint", _paint).add_edge(START, "paint").compile()


async def test_clear_is_offered_on_a_value_the_person_gave_before_where_the_graph_has_no_default(
    bot_api: Any, tmp_path: Any
) -> None:
    tg, runner, store = await defaults._opened(bot_api, tmp_path)
    try:
        # typed as lines, replicas out of range: the form is asked again with the values given
        await tg.deliver(message_update("replicas: 9\nteam: ops"))
        assert defaults.RESUMED == []

        again = Form(tg, bot_api)
        await again.tap("form")
        assert "1/4 · Region" in again.shown and "⌫ Clear" not in defaults._labels(bot_api)  # the graph's
        await again.tap("k")
        await again.type("4")
        await again.tap("k")
        assert "4/4 · Team" in again.shown and "→ ops" in again.shown  # theirs: the graph has none
        assert "⌫ Clear" in defaults._labels(bot_api)
        await again.tap("c", "k")
        assert "• Team: —" in again.shown
        await again.tap("S")
        assert defaults.RESUMED == [{"region": "eu-west-1", "replicas": 4, "dry_run": True}]
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()


async def test_a_multi_select_emptied_resumes_with_nothing_chosen_as_the_summary_shows(
    bot_api: Any, tmp_path: Any
) -> None:
    RESUMED.clear()
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=f"{__name__}:paint"))
    store = MemoryStore(f"typed-refill-{tmp_path.name}")
    tg = await open_bench(bot_api, store, runner)
    try:
        await tg.deliver(message_update("paint"))
        form = Form(tg, bot_api)
        await form.tap("form")
        assert "1/1 · Colors" in form.shown and "→ red" in form.shown  # the graph's default
        await form.tap("t1", "d")  # red off: nothing chosen
        assert "• Colors: —" in form.shown
        await form.tap("S")
        assert RESUMED == [{"colors": []}]
        assert Paint.model_validate(RESUMED[0]).colors == []  # what the graph gets: no default instead
    finally:
        await tg.close()
        await runner.aclose()
        await store.close()
