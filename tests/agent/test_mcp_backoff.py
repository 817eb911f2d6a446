"""An MCP server that fails to start again is down for a while: its tools fail at once with an
error naming it and saying when it is tried again, and its process is not started again until
then; the wait doubles while it keeps failing and starts over once it is back.

The server is a real stdio MCP server (``mcp_wedge_server.py``, FastMCP) that exits at start
once its marker file exists.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path

import pytest

from clarigate.agent import mcp_sessions
from clarigate.agent.harness import AgentSettings, ClarifyingAgent

from .conftest import scripted
from .test_mcp_sessions import WEDGE, started, tool_results

PING = {"name": "ping", "args": {}}


def down_for(seconds: int) -> str:
    return (
        f"ConnectionError: MCP server 'h' did not start (it will be tried again in {seconds} s): "
        "McpError: Connection closed"
    )


async def test_a_server_that_keeps_failing_to_start_is_left_alone_for_longer_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(mcp_sessions, "RETRY_FIRST_SECONDS", 2.0)
    marker, pids = tmp_path / "broken", tmp_path / "pids"
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [WEDGE, str(marker), str(pids), "exit"],
    }
    model = scripted(*[turn for _ in range(5) for turn in ({"tool_calls": [PING]}, {"content": "Done."})])
    caplog.set_level(logging.DEBUG, logger=mcp_sessions.__name__)
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", mcp_servers={"h": server}), model=model
    )

    async def ping(thread: str) -> str:
        assert (await agent.run_turn(thread, "ping")).replies == ["Done."]
        [result] = tool_results(model)
        return result

    try:
        marker.touch()
        os.kill(started(pids)[0], signal.SIGKILL)
        await asyncio.sleep(0.5)
        assert await ping("t1") == down_for(2)  # a start tried: the server exited
        assert len(started(pids)) == 2
        assert await ping("t2") == down_for(2)  # at once, no process started
        assert len(started(pids)) == 2

        await asyncio.sleep(2.2)
        assert await ping("t3") == down_for(4)  # tried again, failed again: the wait doubled
        assert len(started(pids)) == 3

        marker.unlink()
        await asyncio.sleep(4.2)
        assert await ping("t4") == "pong"  # back
        assert len(started(pids)) == 4

        marker.touch()
        os.kill(started(pids)[-1], signal.SIGKILL)
        await asyncio.sleep(0.5)
        assert await ping("t5") == down_for(2)  # down again: the wait starts over
        assert len(started(pids)) == 5
    finally:
        await agent.aclose()
    changes = [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name == mcp_sessions.__name__ and "'h'" in r.getMessage()
    ]
    assert changes == [
        "MCP server 'h' had stopped: starting it again",
        "MCP server 'h' is down: McpError: Connection closed; its tools fail until it is tried again",
        "MCP server 'h' is back",
        "MCP server 'h' had stopped: starting it again",
        "MCP server 'h' is down: McpError: Connection closed; its tools fail until it is tried again",
    ]
