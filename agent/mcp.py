"""MCP servers from ``agent.mcp_servers``: their settings, checked (``mcp_sessions`` opens them).

Each entry is a connection in the shape langchain-mcp-adapters' ``MultiServerMCPClient`` takes,
and ``tool_name_prefix: true`` to offer its tools as ``{server}_{tool}``::

    files:   {transport: stdio, command: python, args: [-m, my_server], env: {TOKEN: "${FILES_TOKEN}"}}
    tickets: {transport: streamable_http, url: "https://mcp.example.com/mcp",
              headers: {Authorization: "Bearer ${TICKETS_TOKEN}"}, tool_name_prefix: true}

``${NAME}`` in any string is replaced by that environment variable (secrets stay out of the
YAML file, and out of the gateway's log: ``mcp_settings.filled_in``); an unset one is an error
naming it, and so is a key the server's transport does not take (``clarigate.agent.mcp_settings``,
checked as the configuration loads). A server that does not start or answer within
``wait_seconds`` seconds is an ``MCPServerError`` naming the server, and so is a tool name two
servers share (naming both), one clarigate's own ``ask_clarification`` has, or one a model
provider does not take (``TOOL_NAME``). An error a server gives names it instead of its URL
(``mcp_sessions``): the URL may hold its key. A call its server could not take (down, refused
it, or its connection closed) is a ``ToolServerUnavailable``: the model reads it as the
catalog's ``tool_server_unavailable`` (``tool_errors``), never the SDK's error.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from clarigate.agent.mcp_settings import TRANSPORTS, VARIABLE, transport_of, unknown_settings
from clarigate.agent.tools import ASK_CLARIFICATION

#: The tool names every provider takes (OpenAI's and Anthropic's ``^[a-zA-Z0-9_-]{1,64}$``):
#: one other is refused in every request the model is sent, so it stops the start instead.
TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


class MCPServerError(ValueError):
    """An MCP server could not be reached or listed; the message names it."""

    def __init__(self, server: str, problem: str) -> None:
        super().__init__(f"MCP server {server!r}: {problem}")
        self.server = server


class ToolServerUnavailable(ConnectionError):
    """A tool call its MCP server could not take: the server is down (not tried again yet, or
    its start failed) or its connection closed before it answered. The message, naming the
    server, says why (the log's); what the model reads names only the server (``tool_errors``)."""

    def __init__(self, server: str, message: str, *, in_flight: bool = False) -> None:
        super().__init__(message)
        self.server = server
        self.in_flight = in_flight  # the call reached the server: whether it took effect is not known


@contextmanager
def unavailable_if_down(server: str) -> Iterator[None]:
    """Turn a failure because ``server`` is down or closed (a ``ConnectionError``, or the SDK's
    ``McpError`` for a closed connection) into ``ToolServerUnavailable``; any other passes."""
    from mcp.shared.exceptions import McpError
    from mcp.types import CONNECTION_CLOSED

    try:
        yield
    except ToolServerUnavailable:
        raise
    except ConnectionError as exc:
        raise ToolServerUnavailable(server, str(exc)) from exc
    except McpError as exc:
        if session_terminated(exc):  # refused, not run (its new session refused it too)
            refused = f"MCP server {server!r}: McpError: Session terminated"
            raise ToolServerUnavailable(server, refused) from exc
        # the SDK's, as its connection ended (a server may answer an error with that code too)
        if (exc.error.code, exc.error.message) != (CONNECTION_CLOSED, "Connection closed"):
            raise
        closed = f"MCP server {server!r}: McpError: Connection closed"
        raise ToolServerUnavailable(server, closed, in_flight=True) from exc


def session_terminated(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK's error for a request its HTTP server answered ``404 Not Found``:
    the server no longer knows the session (it restarted, or expired it) and refused the request
    before running it; MCP's streamable HTTP transport has the client start a new session then."""
    from mcp.shared.exceptions import McpError

    # mcp.client.streamable_http's ``_send_session_terminated_error`` (mcp 1.30: no constant)
    return isinstance(exc, McpError) and (exc.error.code, exc.error.message) == (32600, "Session terminated")


def refused_request_id(exc: BaseException | None) -> object:
    """The JSON-RPC id of the request an HTTP server refused with a 4xx status (it did not run
    it), if that is what ended a session (``exc``, the SDK's task groups unwrapped); else None."""
    import json

    import httpx

    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if not isinstance(exc, httpx.HTTPStatusError) or not exc.response.is_client_error:
        return None
    try:
        return json.loads(exc.request.content).get("id")
    except (ValueError, AttributeError, httpx.RequestNotRead):
        return None


def expand_env(value: Any, server: str, environ: Mapping[str, str] | None = None) -> Any:
    """``value`` with ``${NAME}`` replaced by the environment, in every string inside it."""
    env = os.environ if environ is None else environ
    if isinstance(value, str):

        def sub(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in env:
                raise MCPServerError(server, f"environment variable {name} is not set")
            return env[name]

        return VARIABLE.sub(sub, value)
    if isinstance(value, list | tuple):
        return [expand_env(v, server, env) for v in value]
    if isinstance(value, Mapping):
        return {k: expand_env(v, server, env) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class MCPServer:
    """One server of ``agent.mcp_servers``: its connection, and whether its tools are prefixed."""

    name: str
    connection: dict[str, Any]  # in the shape langchain-mcp-adapters' sessions take
    prefix: bool = False  # ``tool_name_prefix: true``: its tools are offered as ``{name}_{tool}``


def servers_of(servers: Mapping[str, Mapping[str, Any]]) -> list[MCPServer]:
    """The servers, checked and with the environment filled in."""
    result: list[MCPServer] = []
    for name, raw in servers.items():
        if not isinstance(raw, Mapping):
            raise MCPServerError(name, "a server is a mapping with transport and its settings")
        conn = dict(expand_env(dict(raw), name))
        prefix = conn.pop("tool_name_prefix", False)
        if not isinstance(prefix, bool):
            raise MCPServerError(name, f"tool_name_prefix is true or false, not {prefix!r}")
        if unknown := unknown_settings(conn):
            raise MCPServerError(name, "; ".join(unknown))
        transport = transport_of(conn)
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
        result.append(MCPServer(name, conn, prefix))
    return result


def name_problems(
    tools: Mapping[str, Sequence[str]], taken: Mapping[str, str] | None = None
) -> list[MCPServerError]:
    """What stops the start in the tool names ``{server: [names]}`` the servers offer: a name
    two servers share (naming both), and one already taken (``taken``: name -> whose it is;
    ``ask_clarification`` is always clarigate's)."""
    owner = {ASK_CLARIFICATION: "clarigate's own tool, its clarifying question", **(taken or {})}
    problems = []
    held: set[str] = set()  # the names an MCP server holds
    for server, names in tools.items():
        for name in names:
            if not TOOL_NAME.fullmatch(name):
                problems.append(MCPServerError(server, _unsendable(server, name)))
                continue
            if name in owner:
                where = "on one of the two" if name in held else "on it"
                advice = (
                    f"set `tool_name_prefix: true` {where} (its tools are then named like {server}_{name})"
                )
                problems.append(MCPServerError(server, f"its tool {name!r} is also {owner[name]}: {advice}"))
                continue
            owner[name] = f"a tool of MCP server {server!r}"
            held.add(name)
    return problems


def _unsendable(server: str, name: str) -> str:
    """Why the tool ``name`` of ``server`` cannot be offered to a model, and what to do."""
    why = (
        f"its tool {name!r} cannot be offered to a model (a tool name is letters, digits, _ and -, up to 64)"
    )
    if name.startswith(f"{server}_") and not TOOL_NAME.fullmatch(server[:64]):
        return f"{why}: `tool_name_prefix: true` puts the server's name in it; rename the server so it fits"
    if name.startswith(f"{server}_") and len(name) > 64:
        return f"{why}: remove `tool_name_prefix: true`, or give the server a shorter name"
    return f"{why}: that name is the server's own; rename the tool on the server"


def _base_env() -> dict[str, str]:
    keep = ("PATH", "HOME", "LANG", "LC_ALL", "PYTHONPATH", "VIRTUAL_ENV", "SYSTEMROOT", "TMPDIR")
    return {k: os.environ[k] for k in keep if k in os.environ}
