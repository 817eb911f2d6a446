"""A graph's typed interrupt asked as a risk confirmation (``interrupt({"question": …,
"clarification_type": "risk_confirmation"}, response_schema=…)``), answered by typing in the Slack
DM: "yes" to its boolean, or the go-ahead value of its enum, asks "Reply “confirm” …" first, the
graph is not resumed until the person's "confirm"; the safe value resumes it at once. The real
slack-bolt adapter against the fake Slack, a real LangGraph graph."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .conftest import MakeWorld

RESUMED: list[Any] = []
QUESTION = {"question": "Drop the users table?", "clarification_type": "risk_confirmation"}
SCHEMAS: dict[str, dict[str, Any]] = {
    "boolean": {
        "type": "object",
        "properties": {"confirm_drop": {"type": "boolean"}},
        "required": ["confirm_drop"],
    },
    "enum": {"enum": ["Drop it", "Keep it"]},
}


def _graph(schema: dict[str, Any]) -> Any:
    def ask(state: MessagesState) -> dict[str, Any]:
        answer = interrupt(QUESTION, response_schema=schema)
        RESUMED.append(answer)
        return {"messages": [AIMessage(content=f"resumed with {answer}")]}

    return StateGraph(MessagesState).add_node("ask", ask).add_edge(START, "ask").compile()


boolean = _graph(SCHEMAS["boolean"])
enum = _graph(SCHEMAS["enum"])


@pytest.fixture(params=["boolean", "enum"])
async def graph(request: pytest.FixtureRequest) -> AsyncIterator[tuple[str, Any]]:
    """The schema's kind, and the in-process runner of the graph asking it."""
    RESUMED.clear()
    made = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=f"{__name__}:{request.param}"))
    yield request.param, made
    await made.aclose()


GO = {
    "boolean": ("yes", "Confirm drop: yes", {"confirm_drop": True}),
    "enum": ("1", "Value: Drop it", "Drop it"),
}
SAFE = {"boolean": ("no", {"confirm_drop": False}), "enum": ("Keep it", "Keep it")}


async def test_a_typed_go_ahead_value_asks_for_confirm_before_the_graph_resumes(
    make_world: MakeWorld, graph: tuple[str, Any]
) -> None:
    kind, runner = graph
    typed, shown, resumed = GO[kind]
    world = await make_world(runner)
    await world.user.dm("tidy the users")
    await world.settle()
    question = world.fake.posted()

    await world.user.dm(typed)
    await world.settle()
    said = world.fake.last_shown()["text"]
    assert said == f"Reply “confirm” to go ahead with “{shown}”; anything else keeps the question open."
    assert RESUMED == [] and world.fake.edits(question["ts"]) == []  # not resumed, still open

    await world.user.dm("confirm")
    await world.settle()
    assert RESUMED == [resumed]


async def test_a_typed_safe_value_resumes_the_graph_at_once(
    make_world: MakeWorld, graph: tuple[str, Any]
) -> None:
    kind, runner = graph
    typed, resumed = SAFE[kind]
    world = await make_world(runner)
    await world.user.dm("tidy the users")
    await world.settle()
    await world.user.dm(typed)
    await world.settle()
    assert RESUMED == [resumed]
