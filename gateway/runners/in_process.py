"""The default runner: the LangGraph agent in this process (``clarigate.agent.harness.ClarifyingAgent``)."""

from __future__ import annotations

import asyncio
import logging

from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from clarigate.agent.interrupt_kinds import Asked
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.runners.base import AgentRunner, RunInput
from clarigate.gateway.runners.outages import outage_is_unavailable
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.logs import current_log_context
from clarigate.gateway.runtime.preflight import checkpointer_failure

log = logging.getLogger(__name__)

#: The run coordinates passed to tracing (LangSmith) as metadata, besides the thread id.
TRACE_FIELDS = ("platform", "chat", "request_id")


class LangGraphRunner(AgentRunner):
    """The agent in this process; it is built on first use (or ``start``)."""

    def __init__(self, settings: AgentSettings, *, agent: ClarifyingAgent | None = None) -> None:
        """``agent``: one built already (``ClarifyingAgent.create`` with a model or tools of one's
        own, for embedding and tests); else it is built from ``settings`` on first use."""
        self.settings = settings
        self._agent: ClarifyingAgent | None = agent
        self._lock = asyncio.Lock()

    async def start(self) -> None:
        """Build the model, checkpointer, tools (MCP servers too) and graph now, so a broken
        setup fails at start with a message naming what is wrong: the SQLite file
        ``CHECKPOINTER_URL`` names that cannot be made is a ``StartFailure`` naming that setting
        (its default file, in the data directory, is named by ``serve`` as the data directory)."""
        try:
            await self._get()
        except Exception as exc:
            from clarigate.agent.checkpoint import sqlite_path  # the agent's libraries: not on the web side

            url = self.settings.checkpointer_url
            file = sqlite_path(url, self.settings.data_dir) if url else None
            if file is None or (unusable := checkpointer_failure(exc, str(file))) is None:
                raise
            raise unusable from exc

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

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """Run one turn on ``run.thread_id`` (streaming its events to ``run.on_event``); count its
        tokens and any limit that ended it. A checkpointer that cannot be reached now raises
        ``AgentUnavailable`` (``runners.outages``): the message is kept, not failed."""
        agent = await self._get()
        context = current_log_context()
        metadata = {**{name: context[name] for name in TRACE_FIELDS if name in context}, **run.metadata}
        with outage_is_unavailable("a run"):
            output = await agent.run_turn(
                run.thread_id,
                run.text,
                run.response,
                images=run.images,
                metadata=metadata,
                # the inbound id names the turn: a job that changed hands resumes from its checkpoint
                turn_id=run.inbound_id,
                on_event=run.on_event,
                speaker=run.speaker,
                attached=run.attached,
            )
        if output.limit:
            metrics.RUN_LIMITS.labels(limit=output.limit).inc()
        return output

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The clarification ``thread_id`` waits for, as its checkpoints say (None when none)."""
        agent = await self._get()
        with outage_is_unavailable("a look at the thread's question"):
            return await agent.pending_request(thread_id)

    async def pending_asked(self, thread_id: str) -> Asked | None:
        """``pending_request`` as the turn asked it: with what it cannot hold in full, to show
        right above it (``Asked.in_full``), for a question shown again (``clarigate chat``)."""
        agent = await self._get()
        with outage_is_unavailable("a look at the thread's question"):
            return await agent.pending_asked(thread_id)

    async def delete_thread(self, thread_id: str) -> None:
        """Delete everything the checkpointer keeps for ``thread_id`` (an abandoned thread)."""
        agent = await self._get()
        with outage_is_unavailable("a thread's deletion"):
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
