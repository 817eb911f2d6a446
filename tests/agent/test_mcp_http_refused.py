"""An HTTP MCP server that refused a call (HTTP 404 for a session it no longer knows, 401 for a
revoked key): the call did not run. A session it forgot is started again and the call sent there;
any other refusal reads as the server unavailable, never as a call whose effect is not known.

The servers are real FastMCP servers on streamable HTTP (``mcp_notes_server.py``,
``mcp_locked_server.py``, ``mcp_billing_server.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.mcp_sessions import MCPSessions
from clarigate.agent.protocol import catalog

from .conftest import scripted
from .test_mcp import free_port, notes_over_http, server_process

LOCKED = str(Path(__file__).with_name("mcp_locked_server.py"))
BILLING = str(Path(__file__).with_name("mcp_billing_server.py"))
PING = {"name": "ping", "args": {}}


async def test_an_http_server_restarted_between_calls_takes_the_next_calls(tmp_path: Path) -> None:
    log, port = tmp_path / "notes.log", free_port()
    with notes_over_http(log, port) as url:
        sessions = await MCPSessions.open({"notes": {"transport": "streamable_http", "url": url}})
        add_note = next(tool for tool in sessions.tools if tool.name == "add_note")
        assert "noted: before" in str(await add_note.ainvoke({"text": "before"}))
    try:
        # restarted (or its idle session expired): it answers 404 for the session it forgot
        with notes_over_http(log, port):
            said = [str(await add_note.ainvoke({"text": f"after {n}"})) for n in range(3)]
    finally:
        await sessions.aclose()
    assert ["noted: after 0" in said[0], "noted: after 1" in said[1], "noted: after 2" in said[2]] == [
        True
    ] * 3
    # each call ran once: the one the forgotten session refused was sent again, not twice
    assert log.read_text().splitlines() == ["before", "after 0", "after 1", "after 2"]


@contextmanager
def locked_server(port: int, marker: Path, script: str = LOCKED) -> Iterator[str]:
    """``mcp_locked_server.py`` (or ``script``) at ``port``: answers 401 once ``marker`` exists
    (the billing server: writes its charges there); yields its URL."""
    with server_process([script, str(port), "/mcp", str(marker)], port) as url:
        yield url


async def test_a_call_refused_with_401_mid_session_reads_as_the_server_unavailable(tmp_path: Path) -> None:
    revoked = tmp_path / "revoked"
    model = scripted(*[turn for _ in range(3) for turn in ({"tool_calls": [PING]}, {"content": "Done."})])
    with locked_server(free_port(), revoked) as url:
        server = {"transport": "streamable_http", "url": url}
        settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"tickets": server})
        agent = await ClarifyingAgent.create(settings, model=model)
        try:
            read = []
            for thread in ("t1", "t2", "t3"):
                assert (await agent.run_turn(thread, "ping")).replies == ["Done."]
                read += [m.text for m in model.calls[-1] if isinstance(m, ToolMessage)]
                revoked.touch()  # its key is revoked: every request is answered 401 from now on
        finally:
            await agent.aclose()
    unavailable = catalog.text("tool_server_unavailable", "en", server="tickets")
    # refused, the call did not run: never "whether it took effect is not known"
    assert read == ["pong", unavailable, unavailable]


async def test_of_two_calls_at_once_only_the_refused_one_reads_as_not_run(tmp_path: Path) -> None:
    charges = tmp_path / "charges"
    # one turn, two calls the agent runs at once: the server refuses the refund (403: the key may
    # not) while the charge is running, and the refusal ends the session
    calls = [{"name": "refund", "args": {"amount": 5}}, {"name": "charge", "args": {"amount": 7}}]
    model = scripted({"tool_calls": calls}, {"content": "Done."})
    with locked_server(free_port(), charges, BILLING) as url:
        server = {"transport": "streamable_http", "url": url}
        settings = AgentSettings(checkpointer_url="memory://", mcp_servers={"billing": server})
        agent = await ClarifyingAgent.create(settings, model=model)
        try:
            assert (await agent.run_turn("t", "refund 5, charge 7")).replies == ["Done."]
        finally:
            await agent.aclose()
    read = {m.name: m.text for m in model.calls[-1] if isinstance(m, ToolMessage)}
    assert charges.read_text().splitlines() == ["charged 7"]  # the charge ran
    # the refund did not run; the charge may have: never told it did not (the model would retry it)
    assert read == {
        "refund": catalog.text("tool_server_unavailable", "en", server="billing"),
        "charge": catalog.text("tool_server_closed", "en", server="billing"),
    }
