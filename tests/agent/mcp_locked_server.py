"""``python mcp_locked_server.py PORT PATH MARKER``: an MCP server (FastMCP, a ``ping`` tool) on
streamable HTTP at ``http://127.0.0.1:PORT{PATH}`` that, once the file MARKER exists, answers every
request ``401 Unauthorized`` (its key was revoked)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.responses import PlainTextResponse

PORT, PATH, MARKER = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
server = FastMCP("locked", host="127.0.0.1", port=PORT, streamable_http_path=PATH, log_level="WARNING")


@server.tool()
def ping() -> str:
    """Pong."""
    return "pong"


served = server.streamable_http_app()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "http" and MARKER.exists():  # noqa: ASYNC240 (a test server)
        await PlainTextResponse("invalid key", status_code=401)(scope, receive, send)
        return
    await served(scope, receive, send)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
