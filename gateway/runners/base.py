"""Agent runners: how the core gets one agent turn done.

A runner subclasses ``AgentRunner`` and gets each turn as one ``RunInput``. The default runs the
LangGraph agent in process (``clarigate.agent.harness.ClarifyingAgent``); ``agent.server_url``
runs it on a LangGraph server. A runner that keeps threads of its own also has
``delete_thread(thread_id)``, which the upkeep calls for abandoned threads.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from clarigate.agent.events import EventSink
from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol import HumanInputResponse
from clarigate.agent.who import Speaker
from clarigate.gateway.boundary.errors import AgentUnavailable, RunFailed

__all__ = ["AgentRunner", "AgentUnavailable", "RunFailed"]


@dataclass(frozen=True)
class RunInput:
    """One turn, as the core hands it to a runner.

    ``response`` is set when ``text`` answers a clarification (or an interrupt: the runner
    resumes it); ``images`` came with the message; ``metadata`` says where it came from
    (``inbound_id``, ``platform``, ``chat_id``, …) for tracing and for joining a run started
    before for the same inbound message; ``on_event`` is given the run's streamed text and its
    steps as they happen (``clarigate.agent.events``); the returned output is what counts.
    ``attached``: the message came with photos or files (an answer's go with its resume).
    ``speaker`` says who is talking and where (``clarigate.agent.who``): the runner hands it to
    the graph under ``clarigate`` in the run's ``configurable`` and its context.
    """

    thread_id: str
    text: str
    response: HumanInputResponse | None = None
    images: Sequence[ImageInput] = ()
    metadata: Mapping[str, str] = field(default_factory=dict)
    on_event: EventSink | None = None
    speaker: Speaker | None = None
    attached: bool = False

    @property
    def inbound_id(self) -> str | None:
        """The inbound message's id: it names the turn (a run handed back midway resumes it)."""
        return self.metadata.get("inbound_id")


class AgentRunner(ABC):
    """Runs one turn on an agent thread."""

    async def start(self) -> None:  # noqa: B027 (a runner with nothing to build or check)
        """Build or check what runs need, so a broken setup fails at start (default: nothing)."""

    @abstractmethod
    async def run_turn(self, run: RunInput) -> TurnOutput:
        """Run the agent for ``run`` and return what it said (or asked)."""

    async def abandon(self, run: RunInput, stopped: bool = False) -> None:  # noqa: B027 (in process: the call was the run)
        """The gateway gave up on ``run`` (``run_timeout_seconds``; ``stopped``: the person stopped
        it, ``/cancel``): stop what still runs of it elsewhere, so the person's "I stopped" is true
        (default: nothing); never raises."""

    @abstractmethod
    async def ping(self) -> bool:
        """True when the runner's checkpointer (or agent server) answers."""

    async def aclose(self) -> None:  # noqa: B027 (a runner holding nothing)
        """Release resources (default: nothing)."""
