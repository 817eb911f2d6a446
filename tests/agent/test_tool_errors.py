"""A tool that raises is the model's to handle: an error tool message, the run goes on, one log line."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.limits import limit_message
from tests.agent.conftest import AgentFactory, scripted
from tests.agent.openai_stub import Call, Stub, serving

CALLS: list[dict[str, Any]] = []


@tool
def update_table(table: str, password: str = "") -> str:
    """Update a table."""
    CALLS.append({"table": table})
    raise ValueError("table locked\n  File 'db.py', line 3, in update\nTraceback: more text")


def _tool_messages(agent: ClarifyingAgent, thread: str) -> Any:
    async def read() -> list[ToolMessage]:
        state = await agent._graph.aget_state({"configurable": {"thread_id": thread}})
        return [m for m in state.values["messages"] if isinstance(m, ToolMessage)]

    return read()


async def test_the_model_reads_the_error_and_the_run_ends_with_its_reply(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    CALLS.clear()
    args = {"table": "orders", "password": "hunter2-secret"}
    stub = Stub(replies=[[Call("update_table", args)], "The table is locked; try again later."])
    settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
    with serving(stub, monkeypatch), caplog.at_level(logging.INFO, logger="clarigate.agent.tools"):
        agent = await ClarifyingAgent.create(settings, tools=[update_table])
        try:
            out = await agent.run_turn("t", "update the orders table")
            results = await _tool_messages(agent, "t")
        finally:
            await agent.aclose()

    assert out.replies == ["The table is locked; try again later."]
    assert CALLS == [{"table": "orders"}]
    assert stub.refused == []
    # what the next model call saw: the exception's type and first line, nothing of the traceback
    sent = [m for m in stub.received[1]["messages"] if m["role"] == "tool"]
    assert [m["content"] for m in sent] == ["ValueError: table locked"]
    assert [(r.status, r.name) for r in results] == [("error", "update_table")]
    assert "hunter2-secret" not in str(stub.received[1]["messages"][-1])
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert warnings[0].startswith("tool call update_table: error in ")
    assert warnings[0].endswith(": ValueError: table locked")
    assert "hunter2-secret" not in caplog.text.split("DEBUG")[0]


async def test_a_tool_that_always_fails_is_stopped_by_max_tool_calls(make_agent: AgentFactory) -> None:
    CALLS.clear()
    again = {"tool_calls": [{"name": "update_table", "args": {"table": "orders"}}]}
    model = scripted(*[again] * 10, {"content": "never reached"})
    agent = await make_agent(model, [update_table], max_tool_calls=3)
    out = await agent.run_turn("t", "keep trying")
    assert len(CALLS) == 3
    assert out.replies[-1] == limit_message("tool_calls", "en")
    assert out.limit == "tool_calls"
    results = await _tool_messages(agent, "t")
    assert [r.content for r in results if r.status == "error"][:3] == ["ValueError: table locked"] * 3


def test_the_error_text_is_cut_and_masks_url_credentials() -> None:
    from clarigate.agent.tool_errors import MAX_ERROR_CHARS, tool_error_text

    text = tool_error_text(ConnectionError("cannot reach postgresql://app:s3cr3t@db:5432/x " + "x" * 900))
    assert text.startswith("ConnectionError: cannot reach postgresql://app:***@db:5432/x ")
    assert "s3cr3t" not in text and len(text) <= len("ConnectionError: ") + MAX_ERROR_CHARS
    assert tool_error_text(RuntimeError()) == "RuntimeError"


async def test_the_shipped_server_graph_answers_a_raising_tool_the_same_way(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    import yaml

    from clarigate.agent import server_graph

    script = tmp_path / "script.yaml"
    script.write_text(
        yaml.safe_dump(
            [{"tool_calls": [{"name": "update_table", "args": {"table": "orders"}}]}, {"content": "Locked."}]
        )
    )
    monkeypatch.setenv("CLARIGATE_AGENT__TOOLS", "tests.agent.test_tool_errors:update_table")
    server_graph.environment_options.cache_clear()
    try:
        graph = server_graph.graph({"configurable": {"clarigate_agent": {"model": f"scripted:{script}"}}})
        state = await graph.ainvoke({"messages": [{"role": "user", "content": "update orders"}]})
    finally:
        server_graph.environment_options.cache_clear()
    tool_messages = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [(m.status, m.content) for m in tool_messages] == [("error", "ValueError: table locked")]
    assert state["messages"][-1].content == "Locked."
