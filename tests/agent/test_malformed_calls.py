"""Broken ``ask_clarification`` calls still ask, never run a sibling, and keep the history valid.

Driven through ``langchain_openai`` against a local OpenAI-compatible stub that refuses
(400) any history in which a tool call has no result.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import answer_message_text, answer_with_text
from tests.agent.openai_stub import Call, Stub, serving

ASK = "ask_clarification"


async def _ask_then_answer(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, list[str]]:
    ran: list[str] = []

    @tool
    def drop_database(name: str) -> str:
        """Drop a database."""
        ran.append(name)
        return "dropped"

    settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
    with serving(stub, monkeypatch):
        agent = await ClarifyingAgent.create(settings, tools=[drop_database])
        try:
            asked = await agent.run_turn("t", "tidy up")
            assert asked.request is not None
            response = answer_with_text(asked.request, "the staging one", None)
            done = await agent.run_turn("t", answer_message_text(asked.request, response), response)
            assert done.replies == ["Done."]
        finally:
            await agent.aclose()
    assert stub.refused == []
    return asked, ran


async def test_truncated_arguments_still_ask_and_stop_the_sibling(monkeypatch: pytest.MonkeyPatch) -> None:
    truncated = '{"question": "Which database should I drop?", "clarification_type": "risk_conf'
    stub = Stub(replies=[[Call("drop_database", {"name": "prod"}), Call(ASK, raw=truncated)]])
    asked, ran = await _ask_then_answer(stub, monkeypatch)
    assert ran == []
    assert asked.request.question == "Which database should I drop?"
    assert "cut off" not in asked.fallback_text  # the note is for the model, not the person
    tool_results = {
        m["tool_call_id"]: m["content"] for m in stub.received[1]["messages"] if m["role"] == "tool"
    }
    assert any("cut off or not valid JSON" in c for c in tool_results.values())
    assert any(c.startswith("Not run") for c in tool_results.values())


@pytest.mark.parametrize(
    ("raw", "question", "options"),
    [
        ('"Which database?"', "Which database?", []),
        ('["staging", "prod"]', None, ["staging", "prod"]),
        ("42", None, []),
    ],
)
async def test_arguments_that_are_not_an_object(
    raw: str, question: str | None, options: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = Stub(replies=[[Call(ASK, raw=raw), Call("drop_database", {"name": "prod"})]])
    asked, ran = await _ask_then_answer(stub, monkeypatch)
    assert ran == []
    if question:
        assert asked.request.question == question
    assert [o.label for o in asked.request.options] == options
    tool_results = [m["content"] for m in stub.received[1]["messages"] if m["role"] == "tool"]
    assert any("Note:" in c for c in tool_results)


async def test_single_and_parallel_questions_stay_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    ask = {"question": "Which one?", "clarification_type": "approach_choice", "options": ["a", "b"]}
    stub = Stub(
        replies=[[Call(ASK, ask), Call(ASK, {"question": "And?", "clarification_type": "missing_info"})]]
    )
    asked, ran = await _ask_then_answer(stub, monkeypatch)
    assert asked.request.question == "Which one?" and ran == []
    stub = Stub(replies=[[Call(ASK, ask)]])
    await _ask_then_answer(stub, monkeypatch)
