"""A real LangGraph agent whose tool makes a CSV and a PNG, for the platforms' file tests.

The tool returns them as LangChain does for files a tool makes: ``response_format=
"content_and_artifact"``, the content for the model, the artifact a list of standard content
blocks (``create_file_block`` / ``create_image_block``: base64, mime type, file name).
"""

from __future__ import annotations

import base64
import zlib

from langchain_core.messages.content import create_file_block, create_image_block
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn
from clarigate.gateway.runners.in_process import LangGraphRunner

CSV = b"region,sales\neu,120\nus,340\n"


def tiny_png() -> bytes:
    """A valid 1x1 PNG."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body).to_bytes(4, "big")
        return len(body).to_bytes(4, "big") + kind + body + crc

    header = chunk(b"IHDR", (1).to_bytes(4, "big") * 2 + b"\x08\x02\x00\x00\x00")
    pixels = chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00"))
    return b"\x89PNG\r\n\x1a\n" + header + pixels + chunk(b"IEND", b"")


PNG = tiny_png()


@tool(response_format="content_and_artifact")
def make_report(region: str) -> tuple[str, list[dict]]:
    """Make the sales report of a region: a CSV and a chart."""
    blocks = [
        create_file_block(base64=base64.b64encode(CSV).decode(), mime_type="text/csv", filename="report.csv"),
        create_image_block(
            base64=base64.b64encode(PNG).decode(), mime_type="image/png", filename="chart.png"
        ),
    ]
    return "Made report.csv and chart.png.", blocks


async def files_runner(reply: str = "Here is the report.") -> LangGraphRunner:
    """A runner whose scripted model calls ``make_report`` and then replies ``reply``."""
    model = ScriptedChatModel(
        turns=[
            ScriptedTurn.model_validate({"tool_calls": [{"name": "make_report", "args": {"region": "eu"}}]}),
            ScriptedTurn(content=reply),
        ]
    )
    settings = AgentSettings(checkpointer_url="memory://")
    agent = await ClarifyingAgent.create(settings, model=model, tools=[make_report])
    return LangGraphRunner(settings, agent=agent)


async def blocks_runner(blocks: list[dict], reply: str = "Here it is.") -> LangGraphRunner:
    """A runner whose scripted model calls a tool returning ``blocks`` and then replies ``reply``."""

    @tool(response_format="content_and_artifact")
    def make_files() -> tuple[str, list[dict]]:
        """Make the files."""
        return "Made the files.", blocks

    model = ScriptedChatModel(
        turns=[
            ScriptedTurn.model_validate({"tool_calls": [{"name": "make_files", "args": {}}]}),
            ScriptedTurn(content=reply),
        ]
    )
    settings = AgentSettings(checkpointer_url="memory://")
    agent = await ClarifyingAgent.create(settings, model=model, tools=[make_files])
    return LangGraphRunner(settings, agent=agent)
