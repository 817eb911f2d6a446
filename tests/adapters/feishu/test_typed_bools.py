"""A typed interrupt's bool on Feishu: a required one with no default is a Yes / No select with
nothing picked, which the person must pick (submitted untouched it is refused, never sent as a
"no" nobody gave), and every field's hint shows on the card, a bool's and one beside a value shown
filled in (Feishu hides the placeholder then)."""

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


async def test_a_required_typed_bool_must_be_picked_yes_or_no_and_every_hint_shows(make_bot: Any) -> None:
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
        assert any("FLAGHINT" in n for n in notes)  # the yes/no's hint, under it
        assert any("GUESTHINT" in n for n in notes)  # not only the placeholder Feishu hides
        assert any(n.startswith("**Flag**") and "(required)" in n for n in notes)
        guests = next(c for c in components(card, "input") if c["name"] == "f2")
        assert guests["default_value"] == "2"
        assert components(card, "checker") == []  # no box whose untouched state answers "no"
        [flag] = components(card, "select_static")
        assert flag["name"] == "f1" and flag["required"] is True and "initial_option" not in flag
        options = {o["text"]["content"]: o["value"] for o in flag["options"]}
        assert list(options) == ["Yes", "No"]
        submit = payload(button(card, "Submit"))

        async def send(form_value: dict[str, Any]) -> dict[str, Any]:
            action = card_action(submit, tag="button", form_value=form_value, message_id=message_id)
            answered: dict[str, Any] = await bot.click(action)
            await bot.gateway.drain()
            return answered

        for untouched in ({"f2": "2"}, {"f1": "", "f2": "2"}):  # Feishu's check passed by
            refused = await send(untouched)
            assert refused["toast"] == {"type": "error", "content": "Flag: This field is required"}, refused
        assert RESUMED == []  # the graph never got a "no" nobody gave

        ok = await send({"f1": options["No"], "f2": "2"})
        assert ok["toast"]["type"] == "success", ok
        assert RESUMED == [{"flag": False, "guests": 2}]
    finally:
        await runner.aclose()


async def test_a_required_typed_bool_picked_yes_resumes_true(make_bot: Any) -> None:
    RESUMED.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.adapters.feishu.test_typed_bools:flag_graph")
    )
    try:
        bot = await make_bot(runner)
        await bot.deliver(message_event("set it"))
        await bot.gateway.drain()
        message_id, card = list(bot.api.cards.items())[-1]
        [flag] = components(card, "select_static")
        yes = next(o["value"] for o in flag["options"] if o["text"]["content"] == "Yes")
        submit = payload(button(card, "Submit"))
        picked = card_action(submit, tag="button", form_value={"f1": yes, "f2": "3"}, message_id=message_id)
        ok = await bot.click(picked)
        assert ok["toast"]["type"] == "success", ok
        await bot.gateway.drain()
        assert RESUMED == [{"flag": True, "guests": 3}]
    finally:
        await runner.aclose()
