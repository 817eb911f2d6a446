"""A FastMCP server with slow, hanging, failing, huge, image, audio and dying tools (stdio, or
streamable HTTP on the port given as its argument)."""

from __future__ import annotations

import asyncio
import base64
import os
import sys

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import AudioContent

PORT = int(sys.argv[1]) if len(sys.argv) > 1 else 0
server = FastMCP("hunt", host="127.0.0.1", port=PORT or 8000, log_level="WARNING")
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
async def slow(seconds: float) -> str:
    """Answer after some seconds."""
    await asyncio.sleep(seconds)
    return f"slept {seconds}"


@server.tool()
async def slow_write(path: str, seconds: float) -> str:
    """Write a file after some seconds (a slow action with an effect)."""
    await asyncio.sleep(seconds)
    with open(path, "a", encoding="utf-8") as out:  # noqa: ASYNC230 (a test server)
        out.write("done\n")
    return "written"


@server.tool()
async def hang() -> str:
    """Never answer."""
    await asyncio.Event().wait()
    return "never"


@server.tool()
def fail() -> str:
    """Raise."""
    raise ValueError("table locked")


@server.tool()
def huge(chars: int) -> str:
    """A long text."""
    return "x" * chars


@server.tool()
def picture() -> Image:
    """A PNG."""
    return Image(data=PNG, format="png")


@server.tool()
def audio() -> AudioContent:
    """A sound."""
    return AudioContent(type="audio", data=base64.b64encode(b"RIFF").decode(), mimeType="audio/wav")


@server.tool()
def die() -> str:
    """Exit mid-call."""
    os._exit(1)


@server.tool()
def ping() -> str:
    """Pong."""
    return "pong"


if __name__ == "__main__":
    server.run(transport="streamable-http" if PORT else "stdio")
