"""Tools for chat tests: ``delete_data`` records each call in ``$CHAT_TOOL_LOG`` (the test reads
what ran); ``search_docs`` takes a moment."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from langchain_core.tools import tool


@tool
def delete_data(target: str) -> str:
    """Delete a dataset."""
    with Path(os.environ["CHAT_TOOL_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"delete_data {target}\n")
    return f"deleted {target}"


@tool
async def search_docs(query: str) -> str:
    """Searching the docs."""
    await asyncio.sleep(0.6)  # long enough for its step to be shown live
    return f"the guide on {query}"
