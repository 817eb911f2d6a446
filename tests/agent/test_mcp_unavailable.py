"""A call an MCP server could not take reads the same to the model every time: which tool server
is unavailable, and that it may try again later or go on without it; never the SDK's exception.
That holds while the server is left alone (backing off) and for the one call let through after
each wait (the probe) that finds it dying again. A tool's own error answer reads as it was sent.

The server is a real stdio MCP server (``mcp_wedge_server.py``, FastMCP) whose ``die`` tool
exits mid-call: a server that crash-loops on every call.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent import mcp_sessions
from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import catalog

from .conftest import scripted
from .test_mcp_sessions import WEDGE, assert_all_stopped, started

DIE = {"name": "die", "args": {}}
PING = {"name": "ping", "args": {}}
FAIL = {"name": "fail", "args": {}}
UNAVAILABLE = catalog.text("tool_server_unavailable", "en", server="h")
#: for a call the server took and died on: whether it took effect is not known
CLOSED = catalog.text("tool_server_closed", "en", server="h")


def last_result(model: Any) -> ToolMessage:
    [result] = [m for m in model.calls[-1][-1:] if isinstance(m, ToolMessage)]
    return result


async def test_a_down_server_reads_as_unavailable_and_a_call_it_died_on_as_not_known(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mcp_sessions, "RETRY_FIRST_SECONDS", 1.0)
    pids = tmp_path / "pids"
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [WEDGE, str(tmp_path / "m"), str(pids)],
    }
    calls = [FAIL, DIE, DIE, DIE, DIE, PING]
    model = scripted(*[turn for tool in calls for turn in ({"tool_calls": [tool]}, {"content": "Done."})])
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", mcp_servers={"h": server}), model=model
    )

    async def call(tool: dict[str, Any], said: str = "go on") -> ToolMessage:
        assert calls.pop(0) == tool  # as scripted (one conversation: its turns in order)
        assert (await agent.run_turn("t", said)).replies == ["Done."]
        result = last_result(model)
        assert (result.name, result.status) == (tool["name"], "error")
        return result

    try:
        # the tool's own error answer (isError) reads as the server wrote it
        assert "table locked" in (await call(FAIL)).text
        assert (await call(DIE)).text == CLOSED  # it had answered: it died mid-call
        assert (await call(DIE)).text == CLOSED  # started again, it died before it answered
        assert len(started(pids)) == 2
        assert (await call(DIE)).text == UNAVAILABLE  # down: failed at once, nothing started
        assert len(started(pids)) == 2

        await asyncio.sleep(1.2)
        probe = await call(DIE)  # the wait is over: one call goes through, and the server dies again
        assert len(started(pids)) == 3
        assert probe.text == CLOSED  # it took the call: whether that took effect is not known
        # down again, in the person's language (Chinese): the same words, translated
        chinese = catalog.text("tool_server_unavailable", "zh", server="h")
        assert (await call(PING, "请再试一次")).text == chinese
    finally:
        await agent.aclose()
    assert_all_stopped(pids)
