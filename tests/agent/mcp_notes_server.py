"""A small MCP server for the tests (the ``mcp`` package's FastMCP), over stdio or streamable HTTP.

``python mcp_notes_server.py LOG [PORT]``: the ``add_note`` tool appends its note to the
file LOG (so a test sees that it really ran); with PORT it serves streamable HTTP on
127.0.0.1:PORT at ``/mcp``, else stdio.
"""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

LOG = Path(sys.argv[1])
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0

server = FastMCP("notes", host="127.0.0.1", port=PORT or 8000, log_level="WARNING")


@server.tool()
def add_note(text: str) -> str:
    """Write a note down."""
    with LOG.open("a", encoding="utf-8") as log:
        log.write(text + "\n")
    return f"noted: {text}"


@server.tool()
def count_notes() -> int:
    """How many notes there are."""
    return len(LOG.read_text(encoding="utf-8").splitlines()) if LOG.exists() else 0


if __name__ == "__main__":
    server.run(transport="streamable-http" if PORT else "stdio")
