"""What the agent keeps per thread, read and removed without running a turn.

``ClarifyingAgent`` builds on this: its graph and checkpointer hold the threads' checkpoints.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from clarigate.agent.interrupt_kinds import Asked
from clarigate.agent.protocol import HumanInputRequest

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage

    from clarigate.agent.checkpoint import Checkpointer
    from clarigate.agent.mcp_sessions import MCPSessions

log = logging.getLogger(__name__)


class AgentThreads:
    """A thread's messages and open clarification, its deletion, and the checkpointer's health."""

    _graph: Any
    _checkpointer: Checkpointer
    _mcp: MCPSessions | None = None  # the MCP servers' sessions, when the agent opened them

    async def history(self, thread_id: str) -> list[BaseMessage]:
        """The messages kept for ``thread_id`` (empty for a new thread)."""
        snapshot = await self._graph.aget_state({"configurable": {"thread_id": thread_id}})
        return list(snapshot.values.get("messages", [])) if snapshot and snapshot.values else []

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The clarification ``thread_id`` waits for: a pending interrupt's, the last message's,
        or a static breakpoint's "Continue / Stop"; None when the person dismissed a pending
        interrupt's question (``clarigate.agent.dismissals``): its run stopped, and with it every
        interrupt pending from it (another step's of the same super-step, never asked). The
        request alone, holding what fits: for a look at which question it is (``pending_asked``
        to show it to a person)."""
        asked = await self._waiting(thread_id, above=False)
        return asked.request if asked is not None else None

    async def pending_asked(self, thread_id: str) -> Asked | None:
        """``pending_request`` as a turn asked it: with what the request cannot hold (a long
        text, an approval's calls), in full, to show right above it (``Asked.in_full``)."""
        return await self._waiting(thread_id, above=True)

    async def _waiting(self, thread_id: str, above: bool) -> Asked | None:
        from clarigate.agent.dismissals import dismissed_ids
        from clarigate.agent.interrupts import asked_for, request_for
        from clarigate.agent.middleware import above_in, request_in
        from clarigate.agent.models.conversation import thread_locale
        from clarigate.agent.paused import waiting_to_go_on

        snapshot = await self._graph.aget_state({"configurable": {"thread_id": thread_id}})
        messages = list(snapshot.values.get("messages", [])) if snapshot and snapshot.values else []
        interrupts = list(getattr(snapshot, "interrupts", ()) or ())
        if interrupts:
            # one dismissed question stops the run its step was part of: the others of that run
            # (parallel steps' interrupts, pending with it) are closed with it, not asked
            if dismissed_ids(getattr(snapshot, "tasks", ()) or ()) & {i.id for i in interrupts}:
                return None
            first = interrupts[0]
            how = (first.id, first.value, thread_locale(messages), first.response_schema)
            return asked_for(*how) if above else Asked(request_for(*how))
        asked = request_in(messages[-1]) if messages else None
        if asked is not None:  # with the text shown above it, as the turn asked it
            return Asked(asked, above_in(messages[-1]) if above else None)
        request = waiting_to_go_on(self._graph, snapshot)
        return Asked(request) if request is not None else None

    async def _prune(self, config: dict[str, Any]) -> None:
        """Keep the thread's latest checkpoint only; a failure costs storage, never the turn."""
        thread_id = config["configurable"]["thread_id"]
        try:
            await self._checkpointer.prune(thread_id)
        except Exception:  # e.g. a graph with DeltaChannels, which keep_latest refuses
            log.warning("could not prune the checkpoints of thread %s", thread_id, exc_info=True)

    async def delete_thread(self, thread_id: str) -> None:
        """Forget everything kept for ``thread_id``."""
        await self._checkpointer.saver.adelete_thread(thread_id)

    async def ping(self) -> bool:
        """True when the checkpointer answers (for ``/readyz``)."""
        return await self._checkpointer.ping()

    async def aclose(self) -> None:
        """End the MCP servers' sessions and close the checkpointer's connections."""
        if self._mcp is not None:
            await self._mcp.aclose()
        await self._checkpointer.aclose()
