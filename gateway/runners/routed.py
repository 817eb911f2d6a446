"""A runner per route: each run goes to the agent its conversation's route names
(``clarigate.gateway.runtime.routes``), the others to the ``agent:`` section's.

The run's speaker (``clarigate.agent.who``) says where the conversation is, and gets the route's
name as its ``agent``. Each agent keeps a thread of its own for the chat: the ``agent:`` section's
is the chat's thread id itself (as without routes, so threads made before routes keep their
history), a route's is ``{route}:{thread id}`` (``route_thread``), on its checkpointer or its
LangGraph server alike. So a chat whose route changes starts its next message on the new agent
without what it said to the old one, even where both keep threads in one checkpointer or on one
server. An answer to a question the old agent asked is not passed on to the new one: the person
is told, as after ``/new`` (``ANSWER_NOT_PASSED_ON``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from clarigate.agent.harness import TurnOutput
from clarigate.agent.interrupt_kinds import Asked
from clarigate.agent.placement import SettingsDoNotApply
from clarigate.agent.protocol import HumanInputRequest, catalog
from clarigate.gateway.runners.base import AgentRunner, RunInput
from clarigate.gateway.runtime.preflight import StartFailure, agent_start_failure
from clarigate.gateway.runtime.routes import DEFAULT_ROUTE, Route, route_for

log = logging.getLogger(__name__)

#: What the person is told when they answer a question the chat's previous agent asked.
ANSWER_NOT_PASSED_ON = "answer_after_restart"


def route_thread(route: str, thread_id: str) -> str:
    """The thread the agent of ``route`` keeps for the chat thread ``thread_id``."""
    return thread_id if route == DEFAULT_ROUTE else f"{route}:{thread_id}"


def _routed(name: str, run: RunInput) -> RunInput:
    """``run`` as route ``name``'s agent gets it: in its thread of the chat, the speaker naming it."""
    speaker = {**run.speaker, "agent": name} if run.speaker else None
    return replace(run, thread_id=route_thread(name, run.thread_id), speaker=speaker)  # type: ignore[arg-type]


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
                if graph := getattr(getattr(runner, "settings", None), "graph", None):
                    said = agent_start_failure(exc, "", graph=graph)  # its own graph, named
                    raise StartFailure(said.code, f"route {name}: {said.message}") from exc
                raise RuntimeError(f"route {name}: {exc}") from exc

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """Run the turn on its route's agent, in that agent's thread of the chat, the speaker
        naming the route; an answer to another agent's question is not passed on."""
        name, runner = self.pick(run)
        if run.response is not None:
            asker = await self._asker(run.thread_id, run.response.request_id, name)
            if asker is not None:
                log.info("an answer to a question of route %s: not passed on to route %s", asker[0], name)
                if run.response.response_kind == "declined":  # closed (/cancel): its closing said it
                    return TurnOutput(dismissed=True)
                return TurnOutput(
                    replies=[catalog.text(ANSWER_NOT_PASSED_ON, asker[1].locale)], notice_only=True
                )
        return await runner.run_turn(_routed(name, run))

    async def abandon(self, run: RunInput, stopped: bool = False) -> None:
        """The gateway gave up on ``run`` (or the person stopped it): its route's agent stops what
        still runs of it."""
        name, runner = self.pick(run)
        await runner.abandon(_routed(name, run), stopped)

    async def _asker(
        self, thread_id: str, request_id: str, current: str
    ) -> tuple[str, HumanInputRequest] | None:
        """The route and question when ``request_id`` was asked by another route's agent than
        ``current`` (the chat's route changed since); None when ``current``'s asked it, or no
        agent's thread waits for it (the run then goes to ``current`` as ever)."""
        if await self._waits_for(current, thread_id, request_id) is not None:
            return None
        for name in self.runners:
            if name != current and (asked := await self._waits_for(name, thread_id, request_id)) is not None:
                return name, asked
        return None

    async def _waits_for(self, route: str, thread_id: str, request_id: str) -> HumanInputRequest | None:
        """The question ``request_id`` when ``route``'s thread of ``thread_id`` waits for it."""
        look = getattr(self.runners[route], "pending_request", None)
        found = await look(route_thread(route, thread_id)) if look is not None else None
        return found if found is not None and found.request_id == request_id else None

    async def ping(self) -> bool:
        """True when every agent answers."""
        return all(await asyncio.gather(*(runner.ping() for runner in self.runners.values())))

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The question an agent's thread of ``thread_id`` waits for (the ``agent:`` section's first)."""
        return await self._first_waiting("pending_request", thread_id)  # type: ignore[no-any-return]

    async def pending_asked(self, thread_id: str) -> Asked | None:
        """``pending_request`` as its agent asked it: with what it cannot hold in full, to show
        right above it (``Asked.in_full``)."""
        return await self._first_waiting("pending_asked", thread_id)  # type: ignore[no-any-return]

    async def _first_waiting(self, method: str, thread_id: str) -> Any:
        """What ``method`` of each agent says of its thread of ``thread_id``: the first answer
        that is not None (the ``agent:`` section's first); None when no thread waits."""
        for name, runner in self.runners.items():
            look = getattr(runner, method, None)
            found = await look(route_thread(name, thread_id)) if look is not None else None
            if found is not None:
                return found
        return None

    async def delete_thread(self, thread_id: str) -> None:
        """Delete an abandoned thread: every agent's thread of it."""
        for name, runner in self.runners.items():
            delete = getattr(runner, "delete_thread", None)
            if delete is not None:
                await delete(route_thread(name, thread_id))

    async def aclose(self) -> None:
        """Close every agent."""
        for runner in self.runners.values():
            try:
                await runner.aclose()
            except Exception:
                log.warning("closing an agent failed", exc_info=True)
