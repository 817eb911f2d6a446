"""A small MCP server (FastMCP, stdio) whose tools return an image, as MCP's ImageContent, and
a link to a file (``report``: MCP's ResourceLink, as the spec's example of a tool result gives it),
and bytes of no stated type (``dump``: an EmbeddedResource whose BlobResourceContents has no
``mimeType``, which the spec allows)."""

from __future__ import annotations

import base64

from mcp.server.fastmcp import FastMCP, Image
from mcp.types import BlobResourceContents, EmbeddedResource, ResourceLink, TextContent

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


@server.tool(structured_output=False)
def dump() -> list[TextContent | EmbeddedResource]:
    """A core dump, its bytes embedded, its type not stated."""
    blob = BlobResourceContents(uri="file:///srv/dumps/core.1", blob=base64.b64encode(b"\x7fELF").decode())
    return [TextContent(type="text", text="dump ready"), EmbeddedResource(type="resource", resource=blob)]


if __name__ == "__main__":
    server.run(transport="stdio")
