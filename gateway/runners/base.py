"""Agent runners: how the core gets one agent turn done.

The default runs the LangGraph agent in process (``clarigate.agent.harness.ClarifyingAgent``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from clarigate.agent.events import EventSink
from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol import HumanInputResponse
from clarigate.gateway.boundary.errors import AgentUnavailable, RunFailed

__all__ = ["AgentRunner", "AgentUnavailable", "RunFailed"]


class AgentRunner(Protocol):
    """Runs one turn on an agent thread."""

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
        """Run the agent; ``response`` when ``text`` answers a clarification (or an interrupt: the
        runner resumes it); ``images`` came with the message; ``metadata`` says where it came from
        (``inbound_id``, ``platform``, ``chat_id``, …) for tracing and for joining a run started
        before for the same inbound message. ``on_event`` is given the run's streamed text and its
        steps as they happen (``clarigate.agent.events``); the returned output is what counts."""

    async def ping(self) -> bool:
        """True when the runner's checkpointer (or agent server) answers."""

    async def aclose(self) -> None:
        """Release resources."""
