"""The secrets an MCP server is given from the environment (``${NAME}`` in ``agent.mcp_servers``,
the ``agent:`` section's and each route's) never reach a log line, nor what the model reads.

The servers are real: a stdio one that prints its key on stderr (which goes to the log), and a
streamable HTTP one whose URL path holds the key and that answers 401 once its key is revoked.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import ClarifyingAgent
from clarigate.agent.mcp_sessions import MCPSessions
from clarigate.agent.protocol import catalog
from clarigate.gateway.runtime.config import load_config
from tests.agent.conftest import scripted
from tests.agent.test_mcp import free_port, server_process
from tests.log_capture import assert_no_secret, captured_logs

AGENT = Path(__file__).resolve().parents[2] / "agent"
HUNT = str(AGENT / "mcp_hunt_server.py")
LOCKED = str(AGENT / "mcp_locked_server.py")
AUTH = "files-Key-4f9a2c71"
ROUTE_AUTH = "wiki-Key-8d03e5b6"
URL_KEY = "path-Key-77c1d0e9"
PING = {"name": "ping", "args": {}}
#: a stdio server that says on stderr which key it was given, then serves the hunt tools
TELLS_ITS_KEY = (
    "import os, runpy, sys; "
    "print('auth failed for key ' + os.environ['AUTH'], file=sys.stderr, flush=True); "
    f"sys.argv = [{HUNT!r}]; runpy.run_path({HUNT!r}, run_name='__main__')"
)


def telling(variable: str) -> dict[str, object]:
    return {"command": sys.executable, "args": ["-c", TELLS_ITS_KEY], "env": {"AUTH": f"${{{variable}}}"}}


async def test_the_keys_a_stdio_servers_environment_is_given_are_masked_in_its_stderr_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUNT_MCP_AUTH", AUTH)
    monkeypatch.setenv("WIKI_MCP_AUTH", ROUTE_AUTH)  # not a name the gateway knows for a secret
    bot = tmp_path / "bot.yaml"
    route = {
        "name": "ops",
        "match": {"chat": "ops"},
        "agent": {"mcp_servers": {"wiki": telling("WIKI_MCP_AUTH")}},
    }
    bot.write_text(
        yaml.safe_dump({"agent": {"mcp_servers": {"files": telling("HUNT_MCP_AUTH")}}, "routes": [route]})
    )
    config = load_config(bot)
    with captured_logs(config.secret_values(), level=logging.INFO) as logs:  # as `serve` registers them
        for options in (config.agent, config.routes[0].options(config.agent)):
            sessions = await MCPSessions.open(options.mcp_servers)
            await sessions.aclose()
    told = [line for line in logs.lines() if "auth failed for key" in line]
    assert any("MCP server 'files': auth failed for key ***" in line for line in told), logs.lines()
    assert any("MCP server 'wiki': auth failed for key ***" in line for line in told), logs.lines()
    assert_no_secret(logs, [AUTH, ROUTE_AUTH])


@contextmanager
def locked_server(port: int, path: str, marker: Path) -> Iterator[None]:
    with server_process([LOCKED, str(port), path, str(marker)], port, stderr=None):
        yield


async def test_a_key_in_an_http_servers_url_is_in_no_log_line_nor_in_what_the_model_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    port, revoked = free_port(), tmp_path / "revoked"
    monkeypatch.setenv("HUNT_MCP_URL", f"http://127.0.0.1:{port}/s/{URL_KEY}/mcp")
    bot = tmp_path / "bot.yaml"
    server = {"transport": "streamable_http", "url": "${HUNT_MCP_URL}"}
    bot.write_text(
        yaml.safe_dump({"agent": {"checkpointer_url": "memory://", "mcp_servers": {"tickets": server}}})
    )
    config = load_config(bot)
    model = scripted(*[turn for _ in range(3) for turn in ({"tool_calls": [PING]}, {"content": "Done."})])
    with (
        # (the HTTP clients lowered to DEBUG, as an operator chasing a problem might: they print URLs)
        captured_logs(config.secret_values(), level=logging.DEBUG, chatty_libraries=True) as logs,
        locked_server(port, f"/s/{URL_KEY}/mcp", revoked),
    ):
        agent = await ClarifyingAgent.create(config.agent_settings(), model=model)
        try:
            read = []
            for thread in ("t1", "t2", "t3"):
                assert (await agent.run_turn(thread, "ping")).replies == ["Done."]
                read += [m.text for m in model.calls[-1] if isinstance(m, ToolMessage)]
                revoked.touch()
        finally:
            await agent.aclose()
    assert read[0] == "pong"
    down = [line for line in logs.lines() if "MCP server 'tickets' is down" in line]
    assert down and "401 Unauthorized" in down[0], logs.lines()
    assert all(URL_KEY not in text and "/s/" not in text for text in read), read
    # the model reads that the server is unavailable, by name; why (401) is the log's
    down = catalog.text("tool_server_unavailable", "en", server="tickets")
    assert read[1:] == [down, down], read  # refused (401: not run), then down
    assert_no_secret(logs, [URL_KEY])


def test_every_value_filled_in_and_every_password_of_a_servers_url_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever a server is given from the environment (headers, URL parts, arguments) and the
    password of its URL are masked wherever a library prints them, bare."""
    given = {"TICKETS_KEY": "hdr-Key-19af", "TICKETS_PW": "url-Pw-c40e", "WIKI_ARG": "arg-Key-7b21"}
    for name, value in given.items():
        monkeypatch.setenv(name, value)
    servers = {
        "tickets": {
            "url": "https://bot:${TICKETS_PW}@mcp.example.com/mcp",
            "headers": {"X-Api-Key": "${TICKETS_KEY}"},
        },
        "wiki": {"url": "https://wiki:lit-Pw-88d1@wiki.example.com/mcp?sig_token=lit-Tok-3e0c"},
        "files": {"command": "files-server", "args": ["--key", "${WIKI_ARG}"]},
    }
    bot = tmp_path / "bot.yaml"
    bot.write_text(yaml.safe_dump({"agent": {"mcp_servers": servers}}))
    config = load_config(bot)
    secrets = [*given.values(), "lit-Pw-88d1", "lit-Tok-3e0c"]
    with captured_logs(config.secret_values(), level=logging.INFO) as logs:
        for secret in secrets:  # as a library's error might quote it
            logging.getLogger("mcp.client").error("refused %s", secret)
    assert logs.lines() and all(line.endswith("ERROR mcp.client: refused ***") for line in logs.lines())
    assert_no_secret(logs, secrets)
