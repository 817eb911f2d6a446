"""Agent runners: how the core gets one agent turn done.

The default runs the LangGraph agent in process (``agent.harness.ClarifyingAgent``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from agent.harness import ImageInput, TurnOutput
from agent.protocol import HumanInputResponse


class AgentRunner(Protocol):
    """Runs one turn on an agent thread."""

    async def run_turn(
        self,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None = None,
        *,
        images: Sequence[ImageInput] = (),
    ) -> TurnOutput:
        """Run the agent; ``response`` when ``text`` answers a clarification (or an interrupt:
        the runner resumes it); ``images`` came with the person's message."""

    async def ping(self) -> bool:
        """True when the runner's checkpointer answers."""

    async def aclose(self) -> None:
        """Release resources."""
