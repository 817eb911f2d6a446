"""A real MCP server (the ``mcp`` package's), over stdio and streamable HTTP, whose tool the agent calls."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.mcp import MCPServerError
from clarigate.agent.mcp_sessions import server_tool_names
from tests.agent.conftest import scripted
from tests.agent.openai_stub import Call, Stub, serving

SERVER = str(Path(__file__).with_name("mcp_notes_server.py"))
NOTE = {"name": "add_note", "args": {"text": "buy milk"}}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def server_process(argv: list[str], port: int, stderr: int | None = subprocess.DEVNULL) -> Iterator[str]:
    """A server process started with ``argv`` while in the block, once it takes connections at
    ``port`` (20 s at most); yields its MCP URL."""
    process = subprocess.Popen([sys.executable, *argv], stderr=stderr)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@contextmanager
def notes_over_http(log: Path, port: int) -> Iterator[str]:
    """The notes server on streamable HTTP at ``port`` while in the block; yields its URL."""
    with server_process([SERVER, str(log), str(port)], port) as url:
        yield url


@pytest.fixture
def http_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The notes server on streamable HTTP at a free port; yields its URL and its log file."""
    log = tmp_path / "http-notes.log"
    with notes_over_http(log, free_port()) as url:
        yield url, log


def _stdio(log: Path, **extra: Any) -> dict[str, Any]:
    return {"transport": "stdio", "command": sys.executable, "args": [SERVER, str(log)], **extra}


async def _run(settings: AgentSettings, model: Any = None) -> Any:
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        return await agent.run_turn("t", "note: buy milk")
    finally:
        await agent.aclose()


async def test_stdio_server_tool_called_by_the_scripted_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = tmp_path / "notes.log"
    monkeypatch.setenv("NOTES_LABEL", "from-env")
    model = scripted({"tool_calls": [NOTE]}, {"content": "Noted."})
    settings = AgentSettings(
        checkpointer_url="memory://", mcp_servers={"notes": _stdio(log, env={"LABEL": "${NOTES_LABEL}"})}
    )
    out = await _run(settings, model)
    assert out.replies == ["Noted."]
    assert log.read_text().splitlines() == ["buy milk"]
    assert model.calls[1][-1].text == "noted: buy milk"


async def test_http_server_tool_called_through_an_openai_compatible_api(
    http_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    url, log = http_server
    stub = Stub(replies=[[Call("add_note", {"text": "buy milk"})], "Noted."])
    monkeypatch.setenv("NOTES_TOKEN", "secret-token")
    settings = AgentSettings(
        model="openai:gpt-4.1-mini",
        checkpointer_url="memory://",
        mcp_servers={
            "notes": {
                "transport": "streamable_http",
                "url": url,
                "headers": {"Authorization": "Bearer ${NOTES_TOKEN}"},
            }
        },
    )
    with serving(stub, monkeypatch):
        out = await _run(settings)
    assert out.replies == ["Noted."] and not stub.refused
    assert log.read_text().splitlines() == ["buy milk"]
    offered = {t["function"]["name"] for t in stub.received[0]["tools"]}
    assert {"ask_clarification", "add_note", "count_notes"} <= offered
    assert out.usage == {"gpt-4.1-mini": {"input": 22, "output": 14}}


async def test_a_server_that_does_not_start_is_named(tmp_path: Path) -> None:
    broken = {
        "broken": {"transport": "stdio", "command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    }
    with pytest.raises(MCPServerError, match="'broken'"):
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=broken))
    down = {"down": {"transport": "streamable_http", "url": f"http://127.0.0.1:{free_port()}/mcp"}}
    with pytest.raises(MCPServerError, match="'down'"):
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=down))
    missing = {
        "secret": {"transport": "streamable_http", "url": "http://x/mcp", "headers": {"A": "${NOPE_NOT_SET}"}}
    }
    with pytest.raises(MCPServerError, match="NOPE_NOT_SET"):
        await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", mcp_servers=missing))


async def test_doctor_listing(tmp_path: Path) -> None:
    found = await server_tool_names(
        {"notes": _stdio(tmp_path / "n.log"), "broken": {"command": sys.executable, "args": ["-c", "pass"]}}
    )
    assert sorted(found["notes"]) == ["add_note", "count_notes"]
    assert isinstance(found["broken"], MCPServerError)


@pytest.mark.parametrize(
    ("server", "said"),
    [
        (
            {"transport": "stdio", "comand": "python", "args": []},
            "'comand' is not a setting (did you mean `command`?)",
        ),
        (
            {"transprt": "sse", "url": "http://x/sse"},
            "'transprt' is not a setting (did you mean `transport`?)",
        ),
        (
            {"url": "http://x/mcp", "header": {"A": "b"}},
            "'header' is not a setting (did you mean `headers`?)",
        ),
        (
            {"command": "python", "args": [], "enviroment": {"A": "b"}},
            "'enviroment' is not a setting (did you mean `env`",
        ),
        (
            {"transport": "stdio", "command": "python", "args": [], "headers": {"A": "b"}},
            "'headers' is not a setting of a stdio server: it takes args, command, cwd,",
        ),
    ],
)
def test_a_key_the_servers_transport_does_not_take_is_refused_naming_it(
    server: dict[str, Any], said: str
) -> None:
    """Never dropped without a word (a stdio server's extra key the SDK's parameters ignore)."""
    with pytest.raises(ValueError, match="mcp_servers") as refused:
        AgentSettings(mcp_servers={"files": server})
    assert f"MCP server 'files': {said}" in str(refused.value)


async def test_a_key_the_transport_does_not_take_is_refused_before_the_server_starts(tmp_path: Path) -> None:
    """``MCPSessions.open`` given raw settings (no ``AgentSettings``) refuses it too."""
    from clarigate.agent.mcp_sessions import MCPSessions

    with pytest.raises(MCPServerError, match="MCP server 'notes': 'cdw' is not a setting"):
        await MCPSessions.open({"notes": _stdio(tmp_path / "n.log", cdw=str(tmp_path))})
    assert not (tmp_path / "n.log").exists()


def test_the_settings_taken_are_langchain_mcp_adapters_own() -> None:
    from langchain_mcp_adapters import sessions

    from clarigate.agent.mcp_settings import SETTINGS

    connections = {
        "stdio": sessions.StdioConnection,
        "streamable_http": sessions.StreamableHttpConnection,
        "sse": sessions.SSEConnection,
        "websocket": sessions.WebsocketConnection,
    }
    taken = {t: (c.__required_keys__ | c.__optional_keys__) - {"transport"} for t, c in connections.items()}
    assert taken == SETTINGS


async def test_every_setting_a_transport_takes_reaches_a_real_server(
    tmp_path: Path, http_server: tuple[str, Path]
) -> None:
    url, _ = http_server
    stdio = _stdio(
        tmp_path / "n.log",
        env={"LABEL": "x"},
        cwd=str(tmp_path),
        encoding="utf-8",
        encoding_error_handler="replace",
        session_kwargs={},
        tool_name_prefix=True,
    )
    http = {
        "transport": "streamable_http",
        "url": url,
        "headers": {"X-Test": "1"},
        "timeout": 10,
        "sse_read_timeout": 60,
        "terminate_on_close": True,
        "session_kwargs": {},
    }
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"local": stdio, "remote": http})
    found = await server_tool_names(settings.mcp_servers)
    assert sorted(found["local"]) == ["local_add_note", "local_count_notes"]  # type: ignore[arg-type]
    assert sorted(found["remote"]) == ["add_note", "count_notes"]  # type: ignore[arg-type]
