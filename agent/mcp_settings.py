"""The settings an MCP server of ``agent.mcp_servers`` takes, by transport, checked as the
configuration loads.

A server's keys are langchain-mcp-adapters' connection settings for its transport
(``StdioConnection``, ``StreamableHttpConnection``, ``SSEConnection``, ``WebsocketConnection``)
and clarigate's own ``tool_name_prefix``. Any other key (``comand:``, ``header:``) would never
apply: the MCP SDK's stdio parameters drop it without a word, and the HTTP clients fail on it only
once the server is started. So it stops the start instead, naming the server and the key. No
agent library is imported here: the web process reads the configuration too.
"""

from __future__ import annotations

import difflib
import json
import os
import re
from collections.abc import Mapping
from typing import Any

TRANSPORTS = ("stdio", "streamable_http", "sse", "websocket")
#: clarigate's own keys, on every server.
OWN = frozenset({"transport", "tool_name_prefix"})
_HTTP = frozenset(
    {"url", "headers", "timeout", "sse_read_timeout", "session_kwargs", "httpx_client_factory", "auth"}
)
#: What each transport's connection takes (langchain-mcp-adapters' ``sessions`` TypedDicts).
SETTINGS: dict[str, frozenset[str]] = {
    "stdio": frozenset(
        {"command", "args", "env", "cwd", "encoding", "encoding_error_handler", "session_kwargs"}
    ),
    "streamable_http": _HTTP | {"terminate_on_close"},
    "sse": _HTTP,
    "websocket": frozenset({"url", "session_kwargs"}),
}
_EVERY = sorted(OWN.union(*SETTINGS.values()))
#: ``${NAME}`` in a server's settings: that environment variable (``clarigate.agent.mcp.expand_env``).
VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def transport_of(server: Mapping[str, Any]) -> Any:
    """The server's transport: as given, else ``stdio`` for one with a command, else ``streamable_http``."""
    return server.get("transport") or ("stdio" if "command" in server else "streamable_http")


def unknown_settings(server: Mapping[str, Any]) -> list[str]:
    """One line per key ``server`` sets that its transport does not take, with the nearest valid
    key (nothing for a transport that is not known: starting the server says so)."""
    transport = transport_of(server)
    takes = SETTINGS.get(transport) if isinstance(transport, str) else None
    if takes is None:
        return []
    valid = sorted(OWN | takes)
    problems = []
    for key in map(str, server):
        if key in valid:
            continue
        if key in _EVERY:  # another transport's setting
            given = "" if server.get("transport") else " (the transport when none is given)"
            problems.append(
                f"{key!r} is not a setting of a {transport} server{given}: it takes {', '.join(valid)}"
            )
            continue
        near = _nearest(key.lower(), [*valid, *_EVERY])
        problems.append(f"{key!r} is not a setting" + (f" (did you mean `{near}`?)" if near else ""))
    return problems


def _nearest(key: str, candidates: list[str]) -> str | None:
    """The setting ``key`` most likely stands for: a near spelling, else one it starts with
    (``environment`` for ``env``) or that starts with it."""
    near = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if near:
        return near[0]
    return next(
        (c for c in candidates if min(len(c), len(key)) >= 3 and (key.startswith(c) or c.startswith(key))),
        None,
    )


def settings_problems(servers: Mapping[str, Any]) -> list[str]:
    """``MCP server 'name': …`` for each key of each server (``unknown_settings``)."""
    return [
        f"MCP server {name!r}: {problem}"
        for name, server in servers.items()
        if isinstance(server, Mapping)
        for problem in unknown_settings(server)
    ]


def filled_in(servers: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> list[str]:
    """What each ``${NAME}`` in ``servers`` stands for (the variables that are set), wherever it
    is written (``env``, ``headers``, ``url``, ``args``): secrets, for the gateway's log redactor."""
    env = os.environ if environ is None else environ
    return [env[name] for name in VARIABLE.findall(json.dumps(servers, default=str)) if name in env]


def urls_of(servers: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> list[str]:
    """Each server's ``url``, with the variables that are set filled in."""
    env = os.environ if environ is None else environ
    return [
        VARIABLE.sub(lambda m: env.get(m[1], m[0]), server["url"])
        for server in servers.values()
        if isinstance(server, Mapping) and isinstance(server.get("url"), str)
    ]
