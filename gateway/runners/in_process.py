"""The default runner: the LangGraph agent in this process (``clarigate.agent.harness.ClarifyingAgent``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.events import EventSink
from clarigate.agent.harness import AgentSettings, ClarifyingAgent, ImageInput, TurnOutput
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.logs import current_log_context

log = logging.getLogger(__name__)

#: The run coordinates passed to tracing (LangSmith) as metadata, besides the thread id.
TRACE_FIELDS = ("platform", "chat", "request_id")


class LangGraphRunner:
    """Implements ``clarigate.gateway.runners.base.AgentRunner``.

    The agent is built on first use (or ``start``).
    """

    def __init__(self, settings: AgentSettings) -> None:
        self.settings = settings
        self._agent: ClarifyingAgent | None = None
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Build the model, checkpointer, tools (MCP servers too) and graph now, so a broken
        setup fails at start with a message naming what is wrong."""
        await self._get()

    async def _get(self) -> ClarifyingAgent:
        if self._agent is None:
            async with self._lock:
                if self._agent is None:
                    self._agent = await ClarifyingAgent.create(self.settings)
                    what = (
                        f"graph {self.settings.graph}"
                        if self.settings.graph
                        else f"model {self.settings.model}"
                    )
                    log.info("agent ready (%s)", what)
        return self._agent

    async def run_turn(
        self,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None = None,
        *,
        images: Sequence[ImageInput] = (),
        metadata: Mapping[str, Any] | None = None,
        on_event: EventSink | None = None,
    ) -> TurnOutput:
        """Run one turn on ``thread_id`` (streaming its events to ``on_event``); count its tokens
        and any limit that ended it."""
        agent = await self._get()
        context = current_log_context()
        metadata = {**{name: context[name] for name in TRACE_FIELDS if name in context}, **(metadata or {})}
        # the inbound id names the turn: a job that changed hands resumes it from its checkpoint
        turn_id = metadata.get("inbound_id")
        output = await agent.run_turn(
            thread_id, text, response, images=images, metadata=metadata, turn_id=turn_id, on_event=on_event
        )
        if output.limit:
            metrics.RUN_LIMITS.labels(limit=output.limit).inc()
        return output

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The clarification ``thread_id`` waits for, as its checkpoints say (None when none)."""
        agent = await self._get()
        return await agent.pending_request(thread_id)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete everything the checkpointer keeps for ``thread_id`` (an abandoned thread)."""
        agent = await self._get()
        await agent.delete_thread(thread_id)

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
