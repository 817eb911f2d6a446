"""A tool for chat tests: records each call in ``$CHAT_TOOL_LOG`` (the test reads what ran)."""

from __future__ import annotations

import os
from pathlib import Path

from langchain_core.tools import tool


@tool
def delete_data(target: str) -> str:
    """Delete a dataset."""
    with Path(os.environ["CHAT_TOOL_LOG"]).open("a", encoding="utf-8") as log:
        log.write(f"delete_data {target}\n")
    return f"deleted {target}"
