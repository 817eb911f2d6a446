"""``python mcp_billing_server.py PORT PATH LOG``: an MCP server (FastMCP) on streamable HTTP at
``http://127.0.0.1:PORT{PATH}`` whose key may charge but not refund: a ``refund`` call is answered
``403 Forbidden``, once a ``charge`` call has started (a line in LOG each), which then takes long,
so it is still running as the refusal ends the session."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.responses import PlainTextResponse

PORT, PATH, LOG = int(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
server = FastMCP("billing", host="127.0.0.1", port=PORT, streamable_http_path=PATH, log_level="WARNING")
charging = asyncio.Event()


@server.tool()
async def charge(amount: int) -> str:
    """Charge the card."""
    with LOG.open("a") as log:  # noqa: ASYNC230 (a test server)
        log.write(f"charged {amount}\n")
    charging.set()
    await asyncio.sleep(60)
    return f"charged {amount}"


@server.tool()
def refund(amount: int) -> str:
    """Refund the card (this key may not: refused before it runs)."""
    return f"refunded {amount}"


served = server.streamable_http_app()


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http" or scope["method"] != "POST":
        await served(scope, receive, send)
        return
    body, more = b"", True
    while more:
        message = await receive()
        body, more = body + message.get("body", b""), message.get("more_body", False)
    request = json.loads(body or b"{}")
    if isinstance(request, dict) and request.get("params", {}).get("name") == "refund":
        await asyncio.wait_for(charging.wait(), 20)
        await PlainTextResponse("this key may not refund", status_code=403)(scope, receive, send)
        return
    replayed = False

    async def replay() -> dict[str, Any]:
        nonlocal replayed
        if replayed:
            return dict(await receive())
        replayed = True
        return {"type": "http.request", "body": body, "more_body": False}

    await served(scope, replay, send)


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=PORT, log_level="warning")
