"""The default runner: the LangGraph agent in this process (``agent.harness.ClarifyingAgent``)."""

from __future__ import annotations

import asyncio
import logging

from agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from agent.protocol import HumanInputResponse

log = logging.getLogger(__name__)


class LangGraphRunner:
    """Implements ``gateway.runner.AgentRunner``; the agent is built on first use (or ``start``)."""

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self._agent: ClarifyingAgent | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Build the model, checkpointer and graph now (so a broken setup fails at start)."""
        await self._get()

    async def _get(self) -> ClarifyingAgent:
        if self._agent is None:
            async with self._lock:
                if self._agent is None:
                    self._agent = await ClarifyingAgent.create(self.settings)
                    log.info("agent ready (model %s)", self.settings.model)
        return self._agent

    async def run_turn(
        self, thread_id: str, text: str, response: HumanInputResponse | None = None
    ) -> TurnOutput:
        """Run one turn on ``thread_id``."""
        agent = await self._get()
        return await agent.run_turn(thread_id, text, response)

    async def ping(self) -> bool:
        """True when the checkpointer answers; False before the agent is built (not ready yet)."""
        if self._agent is None:
            return False
        try:
            return await self._agent.ping()
        except Exception:
            log.warning("agent not ready", exc_info=True)
            return False

    async def aclose(self) -> None:
        """Close the checkpointer's connections."""
        if self._agent is not None:
            agent, self._agent = self._agent, None
            await agent.aclose()
