"""A small MCP server (FastMCP, stdio) whose tools return an image, as MCP's ImageContent, and
a link to a file (``report``: MCP's ResourceLink, as the spec's example of a tool result gives it)."""

from __future__ import annotations

import base64

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import ResourceLink, TextContent

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


@server.tool(structured_output=False)
def report() -> list[TextContent | ResourceLink]:
    """The quarterly report, as a link."""
    link = ResourceLink(
        type="resource_link", uri="file:///srv/reports/q3.pdf", name="q3.pdf", mimeType="application/pdf"
    )
    return [TextContent(type="text", text="report ready"), link]


if __name__ == "__main__":
    server.run(transport="stdio")
