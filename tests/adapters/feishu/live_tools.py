"""Tools the live-reply tests give the real agent (imported by path, as an operator's tools are)."""

from __future__ import annotations

import asyncio

from langchain_core.tools import tool


@tool
async def search_docs(topic: str) -> str:
    """Searching the docs. Finds the pages of the guide about a topic."""
    await asyncio.sleep(1.2)  # slow enough for the live card to show the step
    return f"The deploy guide covers {topic}."
