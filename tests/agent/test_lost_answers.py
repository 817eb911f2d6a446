"""What the person reads when the model's reply is not a whole answer: a tool call with arguments
that are not JSON is answered within the run (the model tries again), an answer the provider
withheld or cut off at the length limit is said to be so, each with one WARNING.

Driven through ``langchain_openai`` against the local OpenAI-compatible stub."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import catalog
from tests.agent.openai_stub import Call, Stop, Stub, serving


async def _turn(
    stub: Stub,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    text: str = "count it",
    **options: Any,
) -> tuple[Any, list[str], list[str]]:
    ran: list[str] = []

    @tool
    def count(q: str) -> str:
        """Count the letters of q."""
        ran.append(q)
        return str(len(q))

    settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://", **options)
    with serving(stub, monkeypatch), caplog.at_level(logging.INFO):
        agent = await ClarifyingAgent.create(settings, tools=[count])
        try:
            out = await agent.run_turn("t", text)
        finally:
            await agent.aclose()
    assert stub.refused == []
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    return out, ran, warnings


async def test_a_call_with_truncated_arguments_is_answered_and_the_model_tries_again(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(
        replies=[[Call("count", raw='{"q": "abc')], [Call("count", {"q": "abc"})], "It has 3 letters."]
    )
    out, ran, warnings = await _turn(stub, monkeypatch, caplog)
    assert out.replies == ["It has 3 letters."]
    assert ran == ["abc"]
    assert len(stub.received) == 3  # the broken call, the call again, the answer
    second = stub.received[1]["messages"]
    broken_id = second[-2]["tool_calls"][0]["id"]
    assert second[-1]["role"] == "tool" and second[-1]["tool_call_id"] == broken_id
    assert "malformed or truncated" in second[-1]["content"]
    assert len(warnings) == 1 and "count" in warnings[0] and "abc" not in warnings[0]


async def test_a_model_that_only_sends_broken_calls_stops_at_the_model_call_limit(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(replies=[[Call("count", raw='{"q": "abc', id=f"c{i}")] for i in range(30)])
    out, ran, warnings = await _turn(stub, monkeypatch, caplog, max_model_calls=4)
    assert ran == []
    assert (len(stub.received), out.limit) == (4, "model_calls")
    assert len(stub.received) == 4
    assert len([w for w in warnings if "unparsable" in w]) == 1  # one per run


async def test_an_answer_the_provider_withheld_is_said_to_be_withheld(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(replies=[Stop("content_filter", "")])
    out, _, warnings = await _turn(stub, monkeypatch, caplog, text="这个数一下")
    assert out.replies == [catalog.text("model_answer_withheld", "zh")]
    assert len(stub.received) == 1
    assert len(warnings) == 1 and "content_filter" in warnings[0]


async def test_an_answer_cut_off_at_the_length_limit_says_so(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(replies=[Stop("length", "The letters are a, b and")])
    out, _, warnings = await _turn(stub, monkeypatch, caplog)
    assert out.replies == [f"The letters are a, b and\n\n{catalog.text('model_answer_cut_off', 'en')}"]
    assert len(stub.received) == 1
    assert len(warnings) == 1 and "length" in warnings[0]


async def test_a_broken_call_is_answered_when_only_a_tool_call_limit_is_set(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    stub = Stub(replies=[[Call("count", raw='{"q": "abc')], "I could not count it."])
    out, ran, _ = await _turn(stub, monkeypatch, caplog, max_tool_calls=5)
    assert (out.replies, ran, len(stub.received)) == (["I could not count it."], [], 2)
