"""MCP servers from ``agent.mcp_servers``, loaded with langchain-mcp-adapters.

Each entry is a connection in the shape ``MultiServerMCPClient`` takes::

    files:   {transport: stdio, command: python, args: [-m, my_server], env: {TOKEN: "${FILES_TOKEN}"}}
    tickets: {transport: streamable_http, url: "https://mcp.example.com/mcp",
              headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}}

``${NAME}`` in any string is replaced by that environment variable (secrets stay out of
the YAML file); an unset one is an error naming it. A server that does not start or
answer within ``wait_seconds`` seconds is an ``MCPServerError`` naming the server.
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.tools import BaseTool

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
TRANSPORTS = ("stdio", "streamable_http", "sse", "websocket")


class MCPServerError(ValueError):
    """An MCP server could not be reached or listed; the message names it."""

    def __init__(self, server: str, problem: str) -> None:
        super().__init__(f"MCP server {server!r}: {problem}")
        self.server = server


def expand_env(value: Any, server: str, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` with ``${NAME}`` replaced by the environment, in every string inside it."""
    env = os.environ if environ is None else environ
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise MCPServerError(server, f"environment variable {name} is not set")
            return env[name]

        return _VAR.sub(sub, value)
    if isinstance(value, list | tuple):
        return [expand_env(v, server, env) for v in value]
    if isinstance(value, Mapping):
        return {k: expand_env(v, server, env) for k, v in value.items()}
    return value


def connections(servers: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The connections ``MultiServerMCPClient`` takes, checked and with the environment filled in."""
    result: dict[str, dict[str, Any]] = {}
    for name, raw in servers.items():
        if not isinstance(raw, Mapping):
            raise MCPServerError(name, "a server is a mapping with transport and its settings")
        conn = dict(expand_env(dict(raw), name))
        transport = conn.get("transport") or ("stdio" if "command" in conn else "streamable_http")
        if transport not in TRANSPORTS:
            raise MCPServerError(name, f"unknown transport {transport!r} (one of {', '.join(TRANSPORTS)})")
        conn["transport"] = transport
        if transport == "stdio":
            if not conn.get("command"):
                raise MCPServerError(name, "stdio needs a command")
            conn.setdefault("args", [])
            if conn.get("env") is not None:
                # the server gets the environment it is given *added to* the gateway's PATH & co.,
                # so `command: python` still resolves
                conn["env"] = {**_base_env(), **{str(k): str(v) for k, v in conn["env"].items()}}
        elif not conn.get("url"):
            raise MCPServerError(name, f"{transport} needs a url")
        result[name] = conn
    return result


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ}


async def load_mcp_tools(
    servers: Mapping[str, Mapping[str, Any]], wait_seconds: float = 30.0
) -> list[BaseTool]:
    """Every tool of every server; ``MCPServerError`` naming the first server that fails."""
    if not servers:
        return []
    from langchain_mcp_adapters.client import MultiServerMCPClient

    conns = connections(servers)
    client = MultiServerMCPClient(conns)  # type: ignore[arg-type]
    tools: list[BaseTool] = []
    for name in conns:
        tools.extend(await _server_tools(client, name, wait_seconds))
    return tools


async def server_tool_names(
    servers: Mapping[str, Mapping[str, Any]], wait_seconds: float = 30.0
) -> dict[str, Any]:
    """``{server: [tool names] or the MCPServerError}`` for every server (``clarigate doctor``)."""
    from langchain_mcp_adapters.client import MultiServerMCPClient

    found: dict[str, Any] = {}
    for name, raw in servers.items():
        try:
            conn = connections({name: raw})
            client = MultiServerMCPClient(conn)  # type: ignore[arg-type]
            found[name] = [t.name for t in await _server_tools(client, name, wait_seconds)]
        except MCPServerError as exc:
            found[name] = exc
    return found


async def _server_tools(client: Any, name: str, wait_seconds: float) -> list[BaseTool]:
    try:
        async with asyncio.timeout(wait_seconds):
            return list(await client.get_tools(server_name=name))
    except TimeoutError:
        raise MCPServerError(name, f"did not answer within {wait_seconds:.0f} s") from None
    except Exception as exc:  # the SDK wraps start-up failures in task groups: name the root cause
        raise MCPServerError(name, f"did not start or answer: {_root_cause(exc)}") from exc


def _root_cause(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if exc.__cause__ is not None and not str(exc):
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
