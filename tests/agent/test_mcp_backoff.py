"""An MCP server that fails to start again is down for a while: its tools fail at once (the
error names it and says when it is tried again; the model reads that the server is unavailable,
and may try again later or go on without it), and its process is not started again until
then; the wait doubles while it keeps failing and starts over once it is back. A server that
starts but stops again before it answers anything (it crashes on every call, or exits once
initialized) is down the same way; one that stops once after it answered is just started again.

The server is a real stdio MCP server (``mcp_wedge_server.py``, FastMCP) that exits at start
once its marker file exists (or, with ``quit``, once initialized), and whose ``die`` tool exits.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent import mcp_sessions
from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.mcp import ToolServerUnavailable
from clarigate.agent.mcp_sessions import MCPSessions
from clarigate.agent.protocol import catalog

from .conftest import scripted
from .test_mcp_sessions import WEDGE, assert_all_stopped, started, tool_results

PING = {"name": "ping", "args": {}}
DIE = {"name": "die", "args": {}}
#: What the model reads of any call the server could not take: down, or closed as it was sent.
UNAVAILABLE = catalog.text("tool_server_unavailable", "en", server="h")
#: for a call the server took and died on: whether it took effect is not known
CLOSED = catalog.text("tool_server_closed", "en", server="h")
#: Why a call sent as the server exits failed (the SDK's, or ours when the session ended first).
CLOSING = (
    "MCP server 'h': McpError: Connection closed",
    "MCP server 'h': the connection ended before it answered",
)
#: Why a server that stopped before it answered anything is down.
STOPPED = "ConnectionError: its session ended before it answered"


def down_for(seconds: int, why: str) -> str:
    return f"MCP server 'h' did not start (it will be tried again in {seconds} s): {why}"


def warnings_about_h(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name == mcp_sessions.__name__ and "'h'" in r.getMessage()
    ]


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
    model = scripted(*[turn for _ in range(7) for turn in ({"tool_calls": [PING]}, {"content": "Done."})])
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
        assert await ping("t1") == UNAVAILABLE  # a start tried: the server exited
        assert len(started(pids)) == 2
        assert await ping("t2") == UNAVAILABLE  # at once, no process started
        assert len(started(pids)) == 2

        await asyncio.sleep(2.2)
        assert await ping("t3") == UNAVAILABLE  # tried again, failed again
        assert len(started(pids)) == 3

        marker.unlink()
        await asyncio.sleep(2.2)
        assert await ping("t4") == UNAVAILABLE  # the wait doubled: not tried again yet
        assert len(started(pids)) == 3
        await asyncio.sleep(2.0)
        assert await ping("t5") == "pong"  # back
        assert len(started(pids)) == 4

        marker.touch()
        os.kill(started(pids)[-1], signal.SIGKILL)
        await asyncio.sleep(0.5)
        assert await ping("t6") == UNAVAILABLE  # down again
        assert len(started(pids)) == 5
        await asyncio.sleep(2.2)
        marker.unlink()
        assert await ping("t7") == "pong"  # the wait started over
        assert len(started(pids)) == 6
    finally:
        await agent.aclose()
    assert warnings_about_h(caplog) == [
        "MCP server 'h' had stopped: starting it again",
        "MCP server 'h' is down: McpError: Connection closed; its tools fail until it is tried again",
        "MCP server 'h' is back",
        "MCP server 'h' had stopped: starting it again",
        "MCP server 'h' is down: McpError: Connection closed; its tools fail until it is tried again",
        "MCP server 'h' is back",
    ]


async def test_a_server_that_crashes_on_every_call_is_left_alone_like_one_that_cannot_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Its first death after it answered is started again; the new one dying before it answered
    anything, the server is down: calls fail at once saying when it is tried again, no process is
    started meanwhile, the wait doubles while it keeps dying, and one warning says it is down,
    one that it is back. Back, a single death is started again at once."""
    monkeypatch.setattr(mcp_sessions, "RETRY_FIRST_SECONDS", 2.0)
    pids = tmp_path / "pids"
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [WEDGE, str(tmp_path / "m"), str(pids)],
    }
    calls = [DIE, DIE, DIE, DIE, DIE, PING, PING, PING, DIE, PING]
    model = scripted(*[turn for tool in calls for turn in ({"tool_calls": [tool]}, {"content": "Done."})])
    caplog.set_level(logging.DEBUG, logger=mcp_sessions.__name__)
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", mcp_servers={"h": server}), model=model
    )

    async def call(tool: dict[str, Any]) -> str:
        assert calls.pop(0) == tool  # as scripted (one conversation: its turns in order)
        assert (await agent.run_turn("t", tool["name"])).replies == ["Done."]
        return tool_results(model)[-1]

    try:
        assert await call(DIE) == CLOSED  # it answered (its tools' list): the first death, mid-call
        assert await call(DIE) == CLOSED  # ... is started again, and the call reaches it
        assert len(started(pids)) == 2
        assert await call(DIE) == UNAVAILABLE  # the new one died before it answered: down
        assert await call(DIE) == UNAVAILABLE  # at once
        assert len(started(pids)) == 2

        await asyncio.sleep(2.2)
        assert await call(DIE) == CLOSED  # tried again (the probe): it dies again, mid-call
        assert len(started(pids)) == 3
        assert await call(PING) == UNAVAILABLE  # down again
        await asyncio.sleep(2.2)
        assert await call(PING) == UNAVAILABLE  # the wait doubled: not tried again yet
        assert len(started(pids)) == 3
        await asyncio.sleep(2.0)
        assert await call(PING) == "pong"  # back
        assert len(started(pids)) == 4

        assert await call(DIE) == CLOSED  # it answered: one death is just started again
        assert await call(PING) == "pong"
        assert len(started(pids)) == 5
    finally:
        await agent.aclose()
    assert warnings_about_h(caplog) == [
        "MCP server 'h' had stopped: starting it again",
        f"MCP server 'h' is down: {STOPPED}; its tools fail until it is tried again",
        "MCP server 'h' is back",
        "MCP server 'h' had stopped: starting it again",
    ]
    assert_all_stopped(pids)


async def test_a_server_that_exits_once_initialized_is_down_after_one_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Killed, it is started again once; that one exits as soon as it is initialized: the next
    call fails at once, saying the server is down and when it is tried again."""
    monkeypatch.setattr(mcp_sessions, "RETRY_FIRST_SECONDS", 2.0)
    marker, pids = tmp_path / "quits", tmp_path / "pids"
    server = {
        "transport": "stdio",
        "command": sys.executable,
        "args": [WEDGE, str(marker), str(pids), "quit"],
    }
    sessions = await MCPSessions.open({"h": server}, wait_seconds=10)
    try:
        ping = next(t for t in sessions.tools if t.name == "ping")
        marker.touch()
        os.kill(started(pids)[0], signal.SIGKILL)
        await asyncio.sleep(0.5)
        with pytest.raises(ToolServerUnavailable) as first:  # started again: it exits as the call is sent
            await asyncio.wait_for(ping.ainvoke({}), 20)
        # which came first, the call or the exit: closed, or already down
        assert str(first.value) in {*CLOSING, down_for(2, STOPPED)}
        began = time.monotonic()
        with pytest.raises(ToolServerUnavailable) as then:
            await asyncio.wait_for(ping.ainvoke({}), 20)
        assert str(then.value) == down_for(2, STOPPED)
        assert time.monotonic() - began < 1
        assert len(started(pids)) == 2  # the first, then one start: none while it is down
    finally:
        await sessions.aclose()
    assert_all_stopped(pids)
