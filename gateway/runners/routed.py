"""A runner per route: each run goes to the agent its conversation's route names
(``clarigate.gateway.runtime.routes``), the others to the ``agent:`` section's.

The run's speaker (``clarigate.agent.who``) says where the conversation is, and gets the route's
name as its ``agent``. Threads are the chat's as ever; a thread is kept by the agent that ran it
(a route changed later starts the chat's next run on the new agent's side).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clarigate.agent.harness import TurnOutput
from clarigate.agent.placement import SettingsDoNotApply
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.runners.base import AgentRunner, RunInput
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE, Route, route_for

log = logging.getLogger(__name__)


class RoutedRunner(AgentRunner):
    """The ``agent:`` section's runner and one per route, each run handed to its route's."""

    def __init__(self, default: AgentRunner, routes: Sequence[tuple[Route, AgentRunner]]) -> None:
        self.default = default
        self.routes = list(routes)

    @property
    def runners(self) -> dict[str, AgentRunner]:
        """Every agent by its route's name (``default`` first)."""
        return {DEFAULT_ROUTE: self.default, **{route.name: runner for route, runner in self.routes}}

    def __getattr__(self, name: str) -> Any:
        """What ``/readyz`` reads of a runner (``ready_name``, ``ready_where``): the default's."""
        if name.startswith("ready_"):
            return getattr(self.default, name)
        raise AttributeError(name)

    def pick(self, run: RunInput) -> tuple[str, AgentRunner]:
        """The route's name and runner for ``run``'s conversation."""
        conversation = run.speaker["conversation"] if run.speaker else None
        if conversation:
            chosen = route_for(
                [route for route, _ in self.routes],
                conversation["platform"],
                conversation["chat_id"],
                conversation.get("chat_type"),
            )
            if chosen is not None:
                return chosen.name, dict(self.runners)[chosen.name]
        return DEFAULT_ROUTE, self.default

    async def start(self) -> None:
        """Start every route's agent (a broken one stops the start, naming its route)."""
        for name, runner in self.runners.items():
            try:
                await runner.start()
            except SettingsDoNotApply as exc:
                if name == DEFAULT_ROUTE:
                    raise
                raise SettingsDoNotApply([f"routes.{name}: {line}" for line in exc.lines]) from exc
            except Exception as exc:
                if name == DEFAULT_ROUTE:
                    raise
                raise RuntimeError(f"route {name}: {exc}") from exc

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """Run the turn on its route's agent, the speaker naming the route."""
        name, runner = self.pick(run)
        speaker = {**run.speaker, "agent": name} if run.speaker else None
        return await runner.run_turn(replace(run, speaker=speaker))  # type: ignore[arg-type]

    async def ping(self) -> bool:
        """True when every agent answers."""
        return all(await asyncio.gather(*(runner.ping() for runner in self.runners.values())))

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The question ``thread_id`` waits for, on whichever agent kept the thread."""
        for runner in self.runners.values():
            look = getattr(runner, "pending_request", None)
            found = await look(thread_id) if look is not None else None
            if found is not None:
                return found  # type: ignore[no-any-return]
        return None

    async def delete_thread(self, thread_id: str) -> None:
        """Delete an abandoned thread wherever an agent keeps it."""
        for runner in self.runners.values():
            delete = getattr(runner, "delete_thread", None)
            if delete is not None:
                await delete(thread_id)

    async def aclose(self) -> None:
        """Close every agent."""
        for runner in self.runners.values():
            try:
                await runner.aclose()
            except Exception:
                log.warning("closing an agent failed", exc_info=True)
