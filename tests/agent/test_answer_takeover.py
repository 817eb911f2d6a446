"""An own graph's answer whose run was cut off after the person decided: the replica that takes
the job over gives the run's reply once, from the checkpoint, and runs no step a second time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import answer_message_text, answer_with_option

ENTERED: list[str] = []  # every start of a step
DEPLOYED: list[str] = []  # what the deploy step really did
HOLD: dict[str, asyncio.Event] = {}  # when set up: the deploy step waits for it (a crash there)


def _ask(state: MessagesState) -> dict[str, Any]:
    ENTERED.append("ask")
    answer = interrupt({"question": "Which region?", "options": ["eu-west", "us-east"]})
    return {"messages": [AIMessage(f"Deploying to {answer['value']}.")]}


async def _deploy(state: MessagesState) -> dict[str, Any]:
    ENTERED.append("deploy")
    if "held" in HOLD:
        HOLD["running"].set()
        await HOLD["held"].wait()
    region = state["messages"][-1].text.removeprefix("Deploying to ").rstrip(".")
    DEPLOYED.append(region)
    return {"messages": [AIMessage(f"Deployed to {region}.")]}


def make_graph(checkpointer: Any) -> Any:
    """Ask for a region, say so, then deploy there (imported by path)."""
    builder = StateGraph(MessagesState)
    builder.add_node("ask", _ask)
    builder.add_node("deploy", _deploy)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "deploy")
    return builder.compile(checkpointer=checkpointer)


@pytest.fixture(autouse=True)
def _fresh() -> None:
    ENTERED.clear()
    DEPLOYED.clear()
    HOLD.clear()


def _settings(db: Path) -> AgentSettings:
    return AgentSettings(checkpointer_url=f"sqlite:///{db}", graph=f"{__name__}:make_graph")


async def _asked(agent: ClarifyingAgent) -> dict[str, Any]:
    """The question asked, and the answer's job (us-east) as the gateway runs it."""
    asked = await agent.run_turn("t", "deploy", turn_id="message-1")
    assert asked.request is not None
    answer = answer_with_option(asked.request, asked.request.options[1].id, None)
    return {"text": answer_message_text(asked.request, answer), "response": answer, "turn_id": "answer-1"}


async def _taken_over(db: Path, job: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The answer's job run again by another replica: its output and the thread's history."""
    second = await ClarifyingAgent.create(_settings(db))
    try:
        return await second.run_turn("t", **job), await second.history("t")
    finally:
        await second.aclose()


async def test_an_answer_run_to_its_end_then_cut_off_gives_its_reply_again_without_running(
    tmp_path: Path,
) -> None:
    first = await ClarifyingAgent.create(_settings(tmp_path / "c.db"))
    try:
        job = await _asked(first)
        done = await first.run_turn("t", **job)  # the run ends; the replica dies before sending it
    finally:
        await first.aclose()
    assert done.replies == ["Deploying to us-east.", "Deployed to us-east."]
    entered = list(ENTERED)

    out, history = await _taken_over(tmp_path / "c.db", job)

    assert out.request is None and out.replies == ["Deploying to us-east.", "Deployed to us-east."]
    assert ENTERED == entered and DEPLOYED == ["us-east"]  # no step ran again
    assert [m.type for m in history].count("human") == 1  # the answer was not sent as a message


async def test_an_answer_cut_off_between_steps_goes_on_and_gives_every_reply_of_the_run(
    tmp_path: Path,
) -> None:
    first = await ClarifyingAgent.create(_settings(tmp_path / "c.db"))
    HOLD.update(held=asyncio.Event(), running=asyncio.Event())
    try:
        job = await _asked(first)
        running = asyncio.create_task(first.run_turn("t", **job))
        await HOLD["running"].wait()  # "Deploying to us-east." is in the checkpoint
        running.cancel()  # the replica dies in the deploy step
        with pytest.raises(asyncio.CancelledError):
            await running
    finally:
        await first.aclose()
    HOLD.clear()

    out, history = await _taken_over(tmp_path / "c.db", job)

    assert out.request is None and out.replies == ["Deploying to us-east.", "Deployed to us-east."]
    assert ENTERED.count("ask") == 2  # asked, then resumed once: never asked again
    assert DEPLOYED == ["us-east"]
    assert [m.type for m in history].count("human") == 1
