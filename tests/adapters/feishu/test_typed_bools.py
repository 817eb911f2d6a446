"""A typed interrupt's bool on Feishu: a required one with no default answers False when left
unticked (only a consent of the agent's own form must be ticked), and every field's hint shows on
the card, a bool's and one beside a value shown filled in (Feishu hides the placeholder then)."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from pydantic import BaseModel, Field

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .cards import button, components, payload, walk
from .events import card_action, message_event

RESUMED: list[Any] = []


class Flags(BaseModel):
    flag: bool = Field(description="FLAGHINT")
    guests: int = Field(2, description="GUESTHINT", ge=1, le=10)


def _ask(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Set the flag", response_schema=Flags.model_json_schema())
    RESUMED.append(answer)
    return {"messages": [AIMessage(content=f"flag={answer['flag']}")]}


flag_graph = StateGraph(MessagesState).add_node("ask", _ask).add_edge(START, "ask").compile()


async def test_a_required_typed_bool_left_unticked_resumes_false_and_every_hint_shows(make_bot: Any) -> None:
    RESUMED.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.adapters.feishu.test_typed_bools:flag_graph")
    )
    try:
        bot = await make_bot(runner)
        await bot.deliver(message_event("set it"))
        await bot.gateway.drain()
        message_id, card = list(bot.api.cards.items())[-1]
        notes = [c["content"] for c in walk(card["body"]) if c.get("tag") == "markdown"]
        assert any("FLAGHINT" in n for n in notes)  # a checker's hint, under it
        assert any("GUESTHINT" in n for n in notes)  # not only the placeholder Feishu hides
        guests = next(c for c in components(card, "input") if c["name"] == "f2")
        assert guests["default_value"] == "2"
        [checker] = components(card, "checker")
        assert checker["checked"] is False
        submit = payload(button(card, "Submit"))
        ok = await bot.click(
            card_action(submit, tag="button", form_value={"f1": False, "f2": "2"}, message_id=message_id)
        )
        assert ok["toast"]["type"] == "success", ok
        await bot.gateway.drain()
        assert RESUMED == [{"flag": False, "guests": 2}]
    finally:
        await runner.aclose()
