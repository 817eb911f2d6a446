"""Agent runners: how the core gets one agent turn done.

The default runs the LangGraph agent in process (``agent.harness.ClarifyingAgent``).
"""

from __future__ import annotations

from typing import Protocol

from agent.harness import TurnOutput
from agent.protocol import HumanInputResponse


class AgentRunner(Protocol):
    """Runs one turn on an agent thread."""

    async def run_turn(
        self, thread_id: str, text: str, response: HumanInputResponse | None = None
    ) -> TurnOutput:
        """Run the agent; ``response`` when ``text`` answers a clarification."""

    async def ping(self) -> bool:
        """True when the runner's checkpointer answers."""

    async def aclose(self) -> None:
        """Release resources."""
