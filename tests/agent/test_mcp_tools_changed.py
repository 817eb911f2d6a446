"""An MCP server that changes its tools while the agent runs (restarted in a new version, or
adding one and telling its clients): the model is offered the tools listed at the agent's start
until clarigate restarts; a call to one the server no longer has is a tool error the model reads,
and the operator reads in the log which tools changed and that a restart offers them.

The server is a real stdio MCP server (``mcp_shifting_server.py``, FastMCP).
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import catalog

from .conftest import scripted
from .test_mcp import free_port, server_process
from .test_mcp_sessions import started

SERVER = str(Path(__file__).with_name("mcp_shifting_server.py"))
CHANGED = "MCP server 'shifting' changed its tools"
RESTART = (
    "the model is offered its tools as they were when clarigate started; "
    "restart clarigate to offer them as they are now"
)


def shifting(tmp_path: Path, *tools: str) -> dict[str, Any]:
    (tmp_path / "tools").write_text("\n".join(tools))
    return {
        "transport": "stdio",
        "command": sys.executable,
        "args": [SERVER, str(tmp_path / "tools"), str(tmp_path / "pids")],
    }


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "args": args}]}


def results(model: Any) -> list[ToolMessage]:
    return [m for m in model.calls[-1] if isinstance(m, ToolMessage)]


async def logged(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The log lines holding ``text``, once there is one (the list is read again in a task)."""
    for _ in range(100):
        if lines := [r.getMessage() for r in caplog.records if text in r.getMessage()]:
            return lines
        await asyncio.sleep(0.1)
    return []


async def test_a_server_restarted_without_a_tool_answers_its_call_with_an_error_and_the_log_says_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = scripted(
        call("alpha"),
        {"content": "Done."},
        call("alpha"),
        call("beta"),
        call("gamma"),
        {"content": "beta is gone."},
    )
    settings = AgentSettings(
        checkpointer_url="memory://", mcp_servers={"shifting": shifting(tmp_path, "alpha", "beta")}
    )
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        await agent.run_turn("t", "alpha please")
        assert [m.text for m in results(model)] == ["alpha"]
        shifting(tmp_path, "alpha", "gamma")  # the new version: beta gone, gamma new
        os.kill(started(tmp_path / "pids")[0], signal.SIGKILL)
        out = await agent.run_turn("t", "alpha, then beta")
        assert out.replies == ["beta is gone."]
        alpha, beta, gamma = results(model)[-3:]
        closing = catalog.text("tool_server_closed", "en", server="shifting")  # sent as it died: a race
        assert alpha.text in ("alpha", closing)
        assert beta.status == "error" and "Unknown tool: beta" in beta.text, beta
        lines = await logged(caplog, CHANGED)
        assert lines == [f"{CHANGED} (new: gamma; gone: beta): {RESTART}"]
        # the agent still offers what it offered: gamma comes with a restart of clarigate
        assert gamma.status == "error" and "gamma" in gamma.text, gamma
    finally:
        await agent.aclose()
    assert len(started(tmp_path / "pids")) == 2


@pytest.mark.parametrize("prefix", [False, True])
async def test_a_server_telling_its_tools_changed_has_the_log_say_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, prefix: bool
) -> None:
    """Named ``{server}_{tool}`` (``tool_name_prefix: true``) or not, the log names the server's tools."""
    model = scripted(call("shifting_grow" if prefix else "grow", name="delta"), {"content": "Grown."})
    settings = AgentSettings(
        checkpointer_url="memory://",
        mcp_servers={"shifting": {**shifting(tmp_path, "alpha", "grow"), "tool_name_prefix": prefix}},
    )
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        await agent.run_turn("t", "grow delta")
        assert [m.text for m in results(model)] == ["delta added"]
        lines = await logged(caplog, CHANGED)
        assert lines == [f"{CHANGED} (new: delta; gone: none): {RESTART}"]
        assert [r.levelno for r in caplog.records if CHANGED in r.getMessage()] == [logging.WARNING]
    finally:
        await agent.aclose()


async def test_an_http_server_restarted_with_other_tools_has_the_log_say_restart(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """It no longer knows the session (404): a new one is opened, and its tools listed again."""
    model = scripted(call("alpha"), {"content": "Done."}, call("beta"), {"content": "beta is gone."})
    port, agent = free_port(), None
    argv = shifting(tmp_path, "alpha", "beta")["args"] + [str(port)]
    try:
        with server_process(argv, port) as url:
            servers = {"shifting": {"transport": "streamable_http", "url": url}}
            settings = AgentSettings(checkpointer_url="memory://", mcp_servers=servers)
            agent = await ClarifyingAgent.create(settings, model=model)
            await agent.run_turn("t", "alpha please")
            assert [m.text for m in results(model)] == ["alpha"]
        shifting(tmp_path, "alpha", "gamma")  # the new version, at the same URL
        with server_process(argv, port):
            out = await agent.run_turn("t", "beta please")
            assert out.replies == ["beta is gone."]
            beta = results(model)[-1]
            assert beta.status == "error" and "Unknown tool: beta" in beta.text, beta
            assert await logged(caplog, CHANGED) == [f"{CHANGED} (new: gamma; gone: beta): {RESTART}"]
    finally:
        if agent is not None:
            await agent.aclose()


async def test_a_server_giving_its_cursor_again_ends_the_listing(caplog: pytest.LogCaptureFixture) -> None:
    """A faulty server whose ``tools/list`` answers every page with the same cursor: the listing
    stops (it spun forever in the background), with the names it read."""
    from types import SimpleNamespace

    from clarigate.agent.mcp_tool_list import ToolListWatch

    pages: list[str | None] = []

    async def list_tools(cursor: str | None) -> SimpleNamespace:
        pages.append(cursor)
        return SimpleNamespace(tools=[SimpleNamespace(name="alpha")], nextCursor="again")

    watch = ToolListWatch("loop", list_tools)
    watch.offered(["alpha", "beta"])
    with caplog.at_level(logging.WARNING, logger="clarigate.agent.mcp_tool_list"):
        await asyncio.wait_for(watch._check(), timeout=10)
    assert pages == [None, "again"]
    assert "gone: beta" in caplog.text
