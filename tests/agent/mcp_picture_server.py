"""A small MCP server (FastMCP, stdio) whose tools return an image, as MCP's ImageContent."""

from __future__ import annotations

import base64

from mcp.server.fastmcp import FastMCP, Image

server = FastMCP("pictures", log_level="WARNING")
#: A 1×1 PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@server.tool()
def picture() -> Image:
    """A PNG."""
    return Image(data=PNG, format="png")


@server.tool(structured_output=False)  # the list is content blocks, not a value
def captioned() -> list[str | Image]:
    """A caption and a PNG."""
    return ["a red dot", Image(data=PNG, format="png")]


if __name__ == "__main__":
    server.run(transport="stdio")
