"""A stateful MCP server for the tests (the ``mcp`` package's FastMCP, stdio).

``python mcp_counter_server.py PIDS TOOL...``: the tool ``count`` adds one to a count kept in
the process and returns it; any other TOOL named returns its own name (to make names clash).
It appends its pid to the file PIDS at start, and writes a line to stderr at start and on
every count, as servers log.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from mcp.server.fastmcp import FastMCP

SAID = "counter server speaking on stderr"

server = FastMCP("counter", log_level="WARNING")
state = {"count": 0}


def count() -> int:
    """Add one to the count and return it."""
    state["count"] += 1
    print(f"{SAID}: count is {state['count']}", file=sys.stderr, flush=True)
    return state["count"]


def _named(name: str) -> None:
    def tool() -> str:
        return name

    server.add_tool(tool, name=name, description=f"The {name} tool.")


if __name__ == "__main__":
    for name in sys.argv[2:]:
        if name == "count":
            server.add_tool(count)
        else:
            _named(name)
    with Path(sys.argv[1]).open("a", encoding="utf-8") as pids:
        pids.write(f"{os.getpid()}\n")
    print(f"{SAID}: started", file=sys.stderr, flush=True)
    server.run(transport="stdio")
