"""Operators' graphs whose resume the gateway must get right (imported by path in the tests): a
step that fails after the person's answer, typed interrupts whose JSON Schema a declined answer
does not fit, and an approval of two calls of one tool."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt

FAILED: list[str] = []  # the answer each time the deploy step failed on it
RESUMED: list[Any] = []  # what each typed interrupt() returned
RAN: list[str] = []  # the tool calls that really ran


def _deploy(state: MessagesState) -> dict[str, Any]:
    """Echoes "echo …" messages; asks for a region otherwise, and fails after "us"."""
    last = state["messages"][-1].text
    if last.startswith("echo "):
        return {"messages": [AIMessage(last)]}
    answer = interrupt({"question": "Which region?", "options": ["eu", "us"]})
    if answer["value"] == "us":
        FAILED.append(answer["value"])
        raise RuntimeError("us is down")
    return {"messages": [AIMessage(f"Deployed to {answer['value']}.")]}


def _yes_no(state: MessagesState) -> dict[str, Any]:
    answer = interrupt({"question": "Really deploy?", "context": "prod"}, response_schema={"type": "boolean"})
    RESUMED.append(answer)
    return {"messages": [AIMessage("Deploying." if answer else "Not deploying.")]}


def _region(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Which region?", response_schema={"enum": ["eu", "us"]})
    RESUMED.append(answer)
    return {"messages": [AIMessage(f"Region {answer}.")]}


#: Takes a Cancel: its only property is the declined answer's ``reason``.
REASON_SCHEMA = {"type": "object", "properties": {"reason": {"type": "string"}}}


def _why(state: MessagesState) -> dict[str, Any]:
    answer = interrupt("Why?", response_schema=REASON_SCHEMA)
    RESUMED.append(answer)
    return {"messages": [AIMessage(f"Because: {answer.get('reason')}.")]}


def _one_step(node: Any) -> Any:
    def make(checkpointer: Any) -> Any:
        return (
            StateGraph(MessagesState)
            .add_node("n", node)
            .add_edge(START, "n")
            .compile(checkpointer=checkpointer)
        )

    return make


#: Asks a region; fails after "us" (an error of the graph's, after the person's answer).
make_fails_after_answer = _one_step(_deploy)
#: ``response_schema={"type": "boolean"}``.
make_yes_no = _one_step(_yes_no)
#: ``response_schema={"enum": ["eu", "us"]}``.
make_region = _one_step(_region)
#: A schema the declined answer fits.
make_why = _one_step(_why)


def delete_rows(table: str, limit: int = 10) -> str:
    """Delete rows of a table."""
    RAN.append(f"delete_rows {table} {limit}")
    return f"deleted {limit} from {table}"


def make_same_tool_twice(checkpointer: Any) -> Any:
    """``create_agent`` whose model calls ``delete_rows`` twice at once, both reviewed in one
    approval by LangChain's ``HumanInTheLoopMiddleware``."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

    calls = [
        {"name": "delete_rows", "args": {"table": "users", "limit": 5}},
        {"name": "delete_rows", "args": {"table": "orders", "limit": 7}},
    ]
    model = ScriptedChatModel(
        turns=[ScriptedTurn.model_validate({"tool_calls": calls}), ScriptedTurn(content="Done.")]
    )
    review = {"delete_rows": {"allowed_decisions": ["approve", "edit", "reject"]}}
    return create_agent(
        model, tools=[delete_rows], middleware=[HumanInTheLoopMiddleware(review)], checkpointer=checkpointer
    )
