"""What an operator sees: tool calls logged without their arguments, tracing metadata, images."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent, ImageInput
from tests.agent.conftest import AgentFactory, scripted
from tests.agent.openai_stub import Stub, serving


async def test_each_tool_call_is_logged_without_its_arguments(
    make_agent: AgentFactory, caplog: pytest.LogCaptureFixture
) -> None:
    model = scripted(
        {"tool_calls": [{"name": "lookup", "args": {"term": "secret-customer-name"}}]}, {"content": "ok"}
    )
    agent = await make_agent(model, tool_paths=("tests.agent.user_graphs:lookup",))
    with caplog.at_level(logging.INFO, logger="clarigate.agent.tools"):
        await agent.run_turn("t", "look it up")
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.INFO and r.name == "clarigate.agent.tools"
    ]
    assert len(lines) == 1 and lines[0].startswith("tool call lookup: ok in ")
    assert "secret-customer-name" not in caplog.text.split("DEBUG")[0]


async def test_tracing_metadata_carries_thread_and_platform() -> None:
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:metadata_echo")
    )
    try:
        out = await agent.run_turn("thread-9", "hi", metadata={"platform": "slack"})
    finally:
        await agent.aclose()
    assert out.replies == ["{'thread_id': 'thread-9', 'platform': 'slack'}"]


async def test_images_are_described_to_local_models_and_sent_to_providers(
    make_agent: AgentFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    image = ImageInput(b"\x89PNG\r\n", "image/png", "chart.png")
    model = scripted({"content": "I see it."})
    agent = await make_agent(model)
    await agent.run_turn("t", "what is this?", images=[image])
    seen = model.calls[0][-1]
    assert isinstance(seen, HumanMessage) and "chart.png, image/png, 6 bytes" in seen.text

    stub = Stub(replies=["A chart."])
    with serving(stub, monkeypatch):
        provider = await ClarifyingAgent.create(
            AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
        )
        try:
            out = await provider.run_turn("t", "what is this?", images=[image])
        finally:
            await provider.aclose()
    assert out.replies == ["A chart."]
    content: Any = stub.received[0]["messages"][-1]["content"]
    kinds = [part["type"] for part in content]
    assert kinds == ["text", "image_url"]
    assert content[1]["image_url"]["url"].startswith("data:image/png;base64,")


async def test_langsmith_bookkeeping_stays_in_the_loop_unless_tracing_is_on() -> None:
    """Off, a traced step's set-up runs where it is called; on, it goes to LangSmith's own way."""
    import contextvars

    from langsmith.run_helpers import tracing_context

    from clarigate.agent.observe import _inline_unless_tracing

    handed: list[str] = []

    async def default(ctx: contextvars.Context, func: Any, *args: Any) -> Any:
        handed.append(func.__name__)
        return ctx.run(func, *args)

    def step(value: int) -> int:
        return value + 1

    assert await _inline_unless_tracing(default, contextvars.copy_context(), step, 1) == 2
    assert handed == []
    with tracing_context(enabled=True):
        assert await _inline_unless_tracing(default, contextvars.copy_context(), step, 2) == 3
    assert handed == ["step"]


async def test_a_turn_names_its_traced_run_for_feedback_on_the_answer(make_agent: AgentFactory) -> None:
    from langchain_core.tracers.context import collect_runs

    agent = await make_agent(scripted({"content": "first"}, {"content": "second"}))
    with collect_runs() as runs:
        out = await agent.run_turn("t", "hello")
    (turn,) = [run for run in runs.traced_runs if str(run.id) == out.run_id]
    assert out.replies == ["first"] and turn.parent_run_id is None and turn.name == "clarigate turn"
    again = await agent.run_turn("t", "and again")
    assert again.run_id and again.run_id != out.run_id  # each turn its own run
