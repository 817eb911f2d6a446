"""An MCP server whose tools change (the ``mcp`` package's FastMCP, stdio), as a server's do when
it is upgraded.

``python mcp_shifting_server.py TOOLS PIDS [PORT]`` (stdio, or streamable HTTP at PORT): it
offers the tools named in the file TOOLS (one a line) as it starts, each returning its own name;
``grow``, if named, adds the tool it is given and tells the client so (MCP's
``notifications/tools/list_changed``). It appends its pid to PIDS.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.fastmcp import Context, FastMCP

server = FastMCP("shifting", log_level="WARNING")


def _named(name: str) -> None:
    def tool() -> str:
        return name

    server.add_tool(tool, name=name, description=f"The {name} tool.")


async def grow(name: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Add a tool named ``name``."""
    _named(name)
    await ctx.session.send_tool_list_changed()
    return f"{name} added"


if __name__ == "__main__":
    for line in Path(sys.argv[1]).read_text().split():
        server.add_tool(grow) if line == "grow" else _named(line)
    with Path(sys.argv[2]).open("a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    if len(sys.argv) > 3:
        server.settings.port = int(sys.argv[3])
        server.run(transport="streamable-http")
    else:
        server.run(transport="stdio")
