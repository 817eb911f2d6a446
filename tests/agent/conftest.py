"""Fixtures for the agent tests: a scripted model that records, and agents built on it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.tools import BaseTool, tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

AgentFactory = Callable[..., Any]


def scripted(*turns: dict[str, Any]) -> ScriptedChatModel:
    """A scripted model playing ``turns`` (``{content, tool_calls}`` dicts)."""
    return ScriptedChatModel(turns=[ScriptedTurn.model_validate(t) for t in turns])


def ask(question: str = "Which framework?", **args: Any) -> dict[str, Any]:
    """An ``ask_clarification`` tool call for a scripted turn."""
    return {
        "name": "ask_clarification",
        "args": {"question": question, "clarification_type": "approach_choice", **args},
    }


class ToolRecorder:
    """A ``record_note`` tool that remembers every time it really ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

        @tool
        def record_note(note: str) -> str:
            """Write a note down."""
            self.ran.append(note)
            return f"noted: {note}"

        self.tool: BaseTool = record_note


@pytest.fixture
def recorder() -> ToolRecorder:
    """A fresh recording tool."""
    return ToolRecorder()


@pytest.fixture
async def make_agent() -> AsyncIterator[AgentFactory]:
    """Build agents on an in-memory checkpointer (closed after the test)."""
    made: list[ClarifyingAgent] = []

    async def build(model: Any, tools: Sequence[BaseTool] = (), **settings: Any) -> ClarifyingAgent:
        settings.setdefault("checkpointer_url", "memory://")
        if "tool_paths" in settings:  # tools by import path, as ``agent.tools`` names them
            settings["tools"] = tuple(settings.pop("tool_paths"))
        agent = await ClarifyingAgent.create(AgentSettings(**settings), model=model, tools=tools)
        made.append(agent)
        return agent

    yield build
    for agent in made:
        await agent.aclose()


def assert_provider_valid(messages: Sequence[BaseMessage]) -> None:
    """Every tool call has exactly one result right after its message, and no stray tool_use blocks."""
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage):
            continue
        call_ids = [c["id"] for c in message.tool_calls]
        if isinstance(message.content, list):
            for block in message.content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    assert block["id"] in call_ids, f"stray tool_use block {block['id']}"
        following: list[str] = []
        for later in messages[index + 1 :]:
            if not isinstance(later, ToolMessage):
                break
            following.append(later.tool_call_id)
        assert sorted(following) == sorted(call_ids), f"tool calls {call_ids} answered by {following}"
