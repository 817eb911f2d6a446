"""The agent as the gateway uses it: one turn in, replies or a clarification out.

The gateway's runner calls ``ClarifyingAgent.run_turn``; it never touches
LangGraph directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent.protocol import HumanInputRequest, HumanInputResponse


@dataclass(frozen=True)
class AgentSettings:
    """What builds an agent: model, checkpointer and the clarification switches."""

    model: str = "offline"  # LLM_MODEL: "offline", "scripted:PATH", "provider:model"
    checkpointer_url: str | None = None  # CHECKPOINTER_URL; None: SQLite under data_dir
    data_dir: str = ".clarigate"
    allow_clarification: bool = False  # clarify-first phase before the agent acts
    disable_clarification: bool = False  # the tool answers "proceed with your best judgment"


@dataclass(frozen=True)
class TurnOutput:
    """What one run produced: replies to show, and the request if the run asked."""

    replies: list[str] = field(default_factory=list)
    request: HumanInputRequest | None = None
    fallback_text: str | None = None  # the request's text fallback (ToolMessage content)


class ClarifyingAgent:
    """A LangGraph agent with the clarification protocol and a checkpointer.

    Use ``async with await ClarifyingAgent.create(settings) as agent`` or call
    ``aclose`` when done.
    """

    @classmethod
    async def create(cls, settings: AgentSettings) -> ClarifyingAgent:
        """Build the model, the checkpointer and the graph."""
        raise NotImplementedError

    async def run_turn(
        self, thread_id: str, text: str, response: HumanInputResponse | None = None
    ) -> TurnOutput:
        """Run one turn on ``thread_id``; ``response`` when ``text`` answers a clarification."""
        raise NotImplementedError

    async def ping(self) -> bool:
        """True when the checkpointer answers (for ``/readyz``)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the checkpointer's connections."""
        raise NotImplementedError
