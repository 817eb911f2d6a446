"""On a LangGraph server: a new message over an open interrupt resumes it as superseded first.

The same rule as in process (``clarigate.agent.supersede``): before a new message runs on a server
thread that waits on interrupts, every pending one is resumed with ``superseded_value`` (HITL:
``reject``; any other: the declined answer with reason ``superseded``) in a run of its own, which
is waited for and not shown; one that stops on another interrupt is superseded again, up to
``MAX_ROUNDS`` times. Those runs carry ``clarigate_superseded_by`` (the new message's inbound id)
in their metadata, never the inbound id itself (``INBOUND_KEY``), so a job delivered again joins
only its own run; it first waits for the superseding runs an earlier delivery made that are not
over yet, then supersedes what is still pending, so the message runs once, after them.
A typed interrupt whose ``response_schema`` does not take the superseded answer is not resumed:
the new message runs over it. An approval no decision can turn down (approve and edit only) is
turned down without being resumed (``server_not_approved``, as ``clarigate.agent.not_approved``
does in process): its calls answered as the output of its step (``threads.update_state``), then a
run with no input goes on from there. A superseding run that fails is logged and the new message runs;
one someone stopped on the server (``runs.cancel``: it ends ``interrupted``, or is deleted with
``rollback``) stops the new message too, which is told so as any run stopped there
(``server_stops``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol.models import Locale
from clarigate.agent.supersede import MAX_ROUNDS, resume_map
from clarigate.agent.turn_output import TurnOutput
from clarigate.gateway.runners.server_interrupts import RUNS_SEARCHED
from clarigate.gateway.runners.server_not_approved import turn_down_on_server
from clarigate.gateway.runners.server_runs import INBOUND_KEY
from clarigate.gateway.runners.server_stops import UNFINISHED, cancelled_output, rolled_back
from clarigate.gateway.runners.server_wire import messages_of, status_of

__all__ = ["SUPERSEDED_BY_KEY", "supersede_on_server"]

log = logging.getLogger(__name__)

SUPERSEDED_BY_KEY = "clarigate_superseded_by"
#: How a superseding run ends when someone stopped it on the server (``runs.cancel`` with
#: ``interrupt``; with ``rollback`` it is deleted: ``_ended_as``).
STOPPED = ("interrupted", "rollback")


def _pending(state: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(id, value, response_schema)`` of each interrupt the thread's ``state`` waits on."""
    interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
    return [(str(i.get("id")), i.get("value"), i.get("response_schema")) for i in interrupts]


async def _ended_as(client: Any, sid: str, run: Mapping[str, Any]) -> str:
    """The status the superseding ``run`` ended with once it is over; ``"rollback"`` when it is
    gone because someone cancelled it so on the server (``server_stops.rolled_back``)."""
    try:
        await client.runs.join(sid, run["run_id"])
        return str((await client.runs.get(sid, run["run_id"])).get("status"))
    except Exception as exc:
        if status_of(exc) == 404 and await rolled_back(client, sid, run):
            return "rollback"
        raise


async def _earlier_rounds(client: Any, sid: str, by: str) -> bool:
    """Wait for the superseding runs of server thread ``sid`` made for the message ``by`` (an
    earlier delivery of its job) that are not over yet; True when there was one."""
    runs = await client.runs.list(sid, limit=RUNS_SEARCHED)
    mine = [r for r in runs if (r.get("metadata") or {}).get(SUPERSEDED_BY_KEY) == by]
    waiting = [r for r in mine if r.get("status") in UNFINISHED]
    for run in waiting:
        log.info("server thread %s: waiting for superseding run %s made before", sid, run["run_id"])
        try:
            await client.runs.join(sid, run["run_id"])
        except Exception as exc:
            if status_of(exc) != 404:  # gone (lost, rolled back): what is pending is read again
                raise
    return bool(waiting)


async def supersede_on_server(
    client: Any,
    sid: str,
    assistant_id: str,
    state: Mapping[str, Any],
    messages: list[Any],
    meta: Mapping[str, Any],
    settings: Mapping[str, Any],
    locale: Locale,
) -> tuple[Mapping[str, Any], list[Any]] | TurnOutput:
    """Resume every interrupt server thread ``sid`` waits on as superseded; the thread's state and
    messages afterwards (``state`` and ``messages`` as they were when nothing was pending), or the
    output in ``locale`` saying the request was stopped when someone cancelled a superseding run
    on the server (the new message is not run).

    ``settings`` are the run options that carry the bot's agent settings (``run_settings``): the
    graph that resumes must be built as the one that asked."""
    by = str(meta.get(INBOUND_KEY) or "")
    metadata = {**{k: v for k, v in meta.items() if k != INBOUND_KEY}, SUPERSEDED_BY_KEY: by}
    if by and _pending(state) and await _earlier_rounds(client, sid, by):
        state = await client.threads.get_state(sid)
        messages = messages_of(state.get("values"))
    for _ in range(MAX_ROUNDS):
        pending = _pending(state)
        resume, refused = resume_map(pending, thread_locale(messages)) if pending else ({}, {})
        if refused and not await turn_down_on_server(client, sid, state, refused):
            return state, messages  # the new message runs over them: none of their calls runs
        if not (resume or refused):  # none (left) that takes a superseded answer: it runs over them
            return state, messages
        log.info("server thread %s: a new message supersedes interrupt(s) %s", sid, [*resume, *refused])
        go_on = {} if refused else {"command": {"resume": resume}}  # turned down: on from there
        run = await client.runs.create(
            sid, assistant_id, metadata=metadata, multitask_strategy="enqueue", **go_on, **settings
        )
        status = await _ended_as(client, sid, run)
        if status in STOPPED:  # cancelled on the server: so is the new message
            log.warning(
                "server thread %s: superseding run %s was cancelled on the server", sid, run["run_id"]
            )
            return cancelled_output(locale)
        state = await client.threads.get_state(sid)
        messages = messages_of(state.get("values"))
        if status != "success":
            log.warning("server thread %s: superseding run %s ended as %s", sid, run["run_id"], status)
            return state, messages
    if _pending(state):
        log.warning("server thread %s still waits on an interrupt after %d rounds", sid, MAX_ROUNDS)
    return state, messages
