"""MCP servers as their users expect: one session per server kept open, clashing tool names
refused naming both servers, ``ask_clarification`` kept clarigate's, and servers' stderr in the log.

The servers are real stdio MCP servers (``mcp_counter_server.py``, FastMCP).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.mcp import MCPServerError
from clarigate.agent.mcp_sessions import MCPSessions
from clarigate.agent.protocol import catalog
from clarigate.gateway.cli.chat import LOG_FILE
from clarigate.gateway.runners.in_process import LangGraphRunner

from .conftest import scripted
from .mcp_counter_server import SAID
from .test_mcp import free_port, notes_over_http

SERVER = str(Path(__file__).with_name("mcp_counter_server.py"))
HUNT = str(Path(__file__).with_name("mcp_hunt_server.py"))
WEDGE = str(Path(__file__).with_name("mcp_wedge_server.py"))
CLARIGATE = Path(sys.executable).with_name("clarigate")
COUNT = {"name": "count", "args": {}}


def counter(pids: Path, *tools: str) -> dict[str, Any]:
    """The counter server with ``tools`` (``count`` alone by default), on stdio."""
    args = [SERVER, str(pids), *(tools or ["count"])]
    return {"transport": "stdio", "command": sys.executable, "args": args}


def wedging(marker: Path, pids: Path) -> dict[str, Any]:
    """A server that, started again once ``marker`` exists, never answers ``initialize``."""
    return {"transport": "stdio", "command": sys.executable, "args": [WEDGE, str(marker), str(pids)]}


def started(pids: Path) -> list[int]:
    return [int(line) for line in pids.read_text().split()] if pids.exists() else []


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def assert_all_stopped(pids: Path) -> None:
    """Every server process started is gone (the SDK reaps it while closing the session)."""
    assert started(pids)
    deadline = time.monotonic() + 30
    while any(alive(pid) for pid in started(pids)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [pid for pid in started(pids) if alive(pid)]


def tool_results(model: Any) -> list[str]:
    return [m.text for m in model.calls[-1] if isinstance(m, ToolMessage)]


async def test_a_stateful_server_keeps_its_state_across_calls_and_closes_with_the_agent(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    pids = tmp_path / "pids"
    model = scripted(
        {"tool_calls": [COUNT]},
        {"tool_calls": [COUNT]},
        {"content": "Counted twice."},
    )
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"counter": counter(pids)})
    caplog.set_level(logging.INFO)
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        out = await agent.run_turn("t1", "count twice")
        assert out.replies == ["Counted twice."]
        assert tool_results(model) == ["1", "2"]
        # one session per server for the process: another conversation talks to the same server
        await agent.run_turn("t2", "count twice more")
        assert tool_results(model) == ["3", "4"]
        assert len(started(pids)) == 1
    finally:
        await agent.aclose()
    assert_all_stopped(pids)
    said = [r.getMessage() for r in caplog.records if SAID in r.getMessage()]
    assert said == [
        f"MCP server 'counter': {SAID}: {what}"
        for what in ("started", *(f"count is {n}" for n in range(1, 5)))
    ]


async def test_a_server_that_died_is_started_again(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pids = tmp_path / "pids"
    model = scripted({"tool_calls": [COUNT]}, {"tool_calls": [COUNT]}, {"content": "Counted."})
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"counter": counter(pids)})
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        await agent.run_turn("t1", "count twice")
        assert tool_results(model) == ["1", "2"]
        os.kill(started(pids)[0], signal.SIGKILL)
        out = await agent.run_turn("t2", "count twice")
        assert out.replies == ["Counted."]
        # a new server counts from 1 (the old one's count died with it); a call sent while the
        # connection was closing fails (the model reads that the server is unavailable: whether
        # that call was sent first is a race), the next one reaches the new server
        results = tool_results(model)
        closing = catalog.text("tool_server_closed", "en", server="counter")  # sent: effect not known
        assert results == ["1", "2"] or results == [closing, "1"], results
        assert len(started(pids)) == 2
        assert "MCP server 'counter' had stopped: starting it again" in caplog.text
    finally:
        await agent.aclose()
    assert_all_stopped(pids)


async def test_a_server_wedged_on_restart_fails_the_next_calls_at_once_and_is_stopped(
    tmp_path: Path,
) -> None:
    """A server killed whose restart never answers: the call that started it fails with an error
    naming the server and when it is tried again (the model reads that it is unavailable; not a
    cancellation, which ended the whole run); the wedged process is stopped, and the next call
    fails at once with that error instead of waiting for another start."""
    marker, pids = tmp_path / "wedged", tmp_path / "pids"
    sessions = await MCPSessions.open({"h": wedging(marker, pids)}, wait_seconds=3)
    try:
        ping = next(t for t in sessions.tools if t.name == "ping")
        assert "pong" in str(await ping.ainvoke({}))
        marker.touch()
        os.kill(started(pids)[0], signal.SIGKILL)
        await asyncio.sleep(0.5)
        with pytest.raises(ConnectionError) as first:
            await asyncio.wait_for(ping.ainvoke({}), 20)
        assert str(first.value) == (
            "MCP server 'h' did not start (it will be tried again in 5 s): "
            "TimeoutError: it did not answer within 3 s"
        )
        began = time.monotonic()
        with pytest.raises(
            ConnectionError, match=r"'h' did not start \(it will be tried again in [45] s\): Timeout"
        ):
            await asyncio.wait_for(ping.ainvoke({}), 20)
        assert time.monotonic() - began < 1
        assert len(started(pids)) == 2  # the first, then one start: none while it is down
        assert_all_stopped(pids)  # the wedged one was stopped, not left waiting
    finally:
        await sessions.aclose()


async def test_after_a_server_wedged_on_restart_the_person_gets_an_answer(
    tmp_path: Path, redis_stores: Any, make_gateway: Any
) -> None:
    """Two messages after the server wedged: each is answered (the model reads the tool's error),
    the second at once, without starting the server again."""
    marker, pids = tmp_path / "wedged", tmp_path / "pids"
    ping = {"name": "ping", "args": {}}
    model = scripted(
        {"tool_calls": [ping]}, {"content": "First."}, {"tool_calls": [ping]}, {"content": "Second."}
    )
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"h": wedging(marker, pids)})
    runner = LangGraphRunner(settings, agent=await ClarifyingAgent.create(settings, model=model))
    try:
        gateway, chat = await make_gateway(redis_stores(), runner, run_timeout_seconds=120)
        marker.touch()
        os.kill(started(pids)[0], signal.SIGKILL)
        await asyncio.sleep(0.5)
        await chat.say("ping once")
        await gateway.drain(90)
        began = time.monotonic()
        await chat.say("ping again")
        await gateway.drain(90)
        assert time.monotonic() - began < 5
        assert chat.texts() == ["First.", "Second."]
        # what the model read, for each message: the server is unavailable, by name (the same
        # words each time: no exception, nor when it is tried again)
        said = catalog.text("tool_server_unavailable", "en", server="h")
        assert tool_results(model) == [said, said]
        assert len(started(pids)) == 2
    finally:
        await runner.aclose()
    assert_all_stopped(pids)


async def test_a_run_stopped_for_time_stops_the_mcp_tool_it_was_running(
    tmp_path: Path, redis_stores: Any, make_gateway: Any
) -> None:
    """ "Sorry, that took too long and I stopped": the MCP server is told to cancel the call
    (MCP's notifications/cancelled), so the slow action does not happen after the person read it."""
    effect = tmp_path / "effect.txt"
    write = {"name": "slow_write", "args": {"path": str(effect), "seconds": 4}}
    model = scripted({"tool_calls": [write]}, {"content": "Done."})
    hunt = {"transport": "stdio", "command": sys.executable, "args": [HUNT]}
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"h": hunt})
    runner = LangGraphRunner(settings, agent=await ClarifyingAgent.create(settings, model=model))
    try:
        gateway, chat = await make_gateway(redis_stores(), runner, run_timeout_seconds=1.5)
        await chat.say("write it")
        await gateway.drain(30)
        assert chat.texts() == [catalog.text("run_too_long", "en")]
        await asyncio.sleep(5)
        assert not effect.exists(), "the tool went on after the person was told it stopped"
    finally:
        await runner.aclose()


async def test_an_http_server_gone_mid_conversation_fails_the_call_and_is_reconnected(tmp_path: Path) -> None:
    log, port = tmp_path / "notes.log", free_port()
    with notes_over_http(log, port) as url:
        sessions = await MCPSessions.open({"notes": {"transport": "streamable_http", "url": url}})
    try:
        add_note = next(tool for tool in sessions.tools if tool.name == "add_note")
        # the server is down: the call fails at once (it used to wait for ever), naming the server
        with pytest.raises(Exception, match="notes"):
            await asyncio.wait_for(add_note.ainvoke({"text": "lost"}), 60)
        with notes_over_http(log, port):
            assert "noted: kept" in str(await add_note.ainvoke({"text": "kept"}))
    finally:
        await sessions.aclose()
    assert log.read_text().splitlines() == ["kept"]


async def test_two_servers_with_one_tool_name_stop_the_start_naming_both(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    servers = {"tickets": counter(pids, "search"), "wiki": counter(pids, "search")}
    with pytest.raises(MCPServerError) as refused:
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=servers))
    assert "'wiki'" in str(refused.value) and "'tickets'" in str(refused.value)
    assert "'search'" in str(refused.value) and "tool_name_prefix" in str(refused.value)
    assert_all_stopped(pids)  # the servers started before the refusal are stopped again

    servers["wiki"]["tool_name_prefix"] = True
    model = scripted({"tool_calls": [{"name": "wiki_search"}, {"name": "search"}]}, {"content": "Found."})
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", mcp_servers=servers), model=model
    )
    try:
        assert (await agent.run_turn("t", "find it")).replies == ["Found."]
    finally:
        await agent.aclose()
    assert tool_results(model) == ["search", "search"]


async def test_a_tool_named_ask_clarification_is_refused(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    servers = {"sneaky": counter(pids, "ask_clarification")}
    with pytest.raises(MCPServerError, match="'sneaky'.*'ask_clarification'.*clarigate's own tool"):
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=servers))
    assert_all_stopped(pids)
    servers["sneaky"]["tool_name_prefix"] = True
    agent = await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=servers))
    await agent.aclose()


async def test_a_tool_name_no_provider_takes_is_refused_naming_server_and_tool(tmp_path: Path) -> None:
    """OpenAI and Anthropic refuse every request offering a tool not named ``^[a-zA-Z0-9_-]{1,64}$``."""
    pids = tmp_path / "pids"
    with pytest.raises(MCPServerError, match=r"'files'.*'files\.read'.*rename the tool on the server"):
        await ClarifyingAgent.create(
            AgentSettings(checkpointer_url="memory://", mcp_servers={"files": counter(pids, "files.read")})
        )
    servers = {"my.fs": {**counter(pids, "read"), "tool_name_prefix": True}}
    with pytest.raises(MCPServerError, match=r"'my\.fs'.*'my\.fs_read'.*rename the server"):
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=servers))
    assert_all_stopped(pids)


def test_a_servers_stderr_goes_to_the_chat_log_not_the_terminal(tmp_path: Path) -> None:
    pids, script, bot = tmp_path / "pids", tmp_path / "script.yaml", tmp_path / "bot.yaml"
    script.write_text(yaml.safe_dump([{"tool_calls": [COUNT]}, {"content": "Counted."}]))
    bot.write_text(yaml.safe_dump({"agent": {"mcp_servers": {"counter": counter(pids)}}}))
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(tmp_path / "data"), "LLM_MODEL": f"scripted:{script}"}
    for name in ("CHECKPOINTER_URL", "CLARIGATE_CONFIG", "LANGGRAPH_URL", "ALLOW_CLARIFICATION"):
        env.pop(name, None)
    chat = subprocess.run(
        [str(CLARIGATE), "chat", "--config", str(bot)],
        input="count please\n",
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert chat.returncode == 0, chat.stderr
    assert "Counted." in chat.stdout
    assert SAID not in chat.stdout and SAID not in chat.stderr
    log = (tmp_path / "data" / LOG_FILE).read_text(encoding="utf-8")
    assert f"MCP server 'counter': {SAID}: started" in log
    assert f"{SAID}: count is 1" in log
    assert_all_stopped(pids)


async def test_doctor_names_both_servers_of_a_clash(tmp_path: Path) -> None:
    from clarigate.gateway.cli.doctor import Report, _check_mcp
    from clarigate.gateway.runtime.config import GatewayConfig

    pids = tmp_path / "pids"
    servers = {"tickets": counter(pids, "search"), "wiki": counter(pids, "search")}
    report = Report()
    answered, _ = await _check_mcp(GatewayConfig(agent={"mcp_servers": servers}).agent, report)
    assert not answered
    assert [p for p in report.problems if "'tickets'" in p and "'wiki'" in p and "'search'" in p]
    assert json.dumps(report.ok).count("search") == 2
