"""Whether a server thread is paused on one of its graph's static breakpoints.

A run that stopped on a breakpoint leaves the thread as one cut off mid-run does: steps pending
(``next``), no interrupt, the same checkpoint (LangGraph writes nothing more when it stops). What
tells them apart is the graph: the server marks its breakpoints in the assistant's graph
(``GET /assistants/{id}/graph``: a node's ``metadata.__interrupt`` is ``before``, ``after`` or
both). A run started with input never runs a step past a breakpoint of its graph, so a thread
paused before an ``interrupt_before`` step, or right after an ``interrupt_after`` one ran, stopped
there: it waits for the person ("Continue?"), and is never gone on with by itself. Going on
without input would pass the breakpoint (LangGraph resumes past the steps it stopped at).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from clarigate.agent.breakpoints import breakpoint_request, paused_at
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.runners.server_wire import messages_of, status_of

log = logging.getLogger(__name__)

INTERRUPT_MARK = "__interrupt"


async def graph_breakpoints(client: Any, assistant_id: str) -> tuple[set[str], set[str]] | None:
    """The steps the assistant's graph stops before and after; None when the server does not
    give the graph (a 4xx: a graph it cannot draw); a 5xx or a network error is raised."""
    try:
        graph = await client.assistants.get_graph(assistant_id)
    except Exception as exc:
        status = status_of(exc)
        if status is None or status >= 500:
            raise
        log.warning("could not read the graph of assistant %s (%s): %s", assistant_id, status, exc)
        return None
    before: set[str] = set()
    after: set[str] = set()
    for node in graph.get("nodes") or []:
        marks = str((node.get("metadata") or {}).get(INTERRUPT_MARK) or "").split(",")
        if "before" in marks:
            before.add(str(node.get("id")))
        if "after" in marks:
            after.add(str(node.get("id")))
    return before, after


async def on_breakpoint(client: Any, assistant_id: str, sid: str, state: Mapping[str, Any]) -> bool:
    """True when the thread ``sid`` (its ``state``) is paused on a static breakpoint of the
    assistant's graph, or may be (its graph could not be read: asking is the safe side)."""
    next_steps = list(state.get("next") or ())
    if not paused_at(next_steps, state.get("interrupts")):
        return False
    found = await graph_breakpoints(client, assistant_id)
    if found is None:
        return True
    before, after = found
    if before.intersection(next_steps):
        return True
    parent = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
    if not after or not parent:
        return False
    ran = await client.threads.get_state(sid, checkpoint_id=parent)  # the steps that just ran
    return bool(after.intersection(ran.get("next") or ()))


async def breakpoint_question(
    client: Any, assistant_id: str, sid: str, state: Mapping[str, Any]
) -> HumanInputRequest | None:
    """The "Continue?" the thread ``sid`` waits for when paused on a breakpoint; None otherwise."""
    if not await on_breakpoint(client, assistant_id, sid, state):
        return None
    at = str((state.get("checkpoint") or {}).get("checkpoint_id"))
    locale = thread_locale(messages_of(state.get("values")))
    return breakpoint_request(at, list(state.get("next") or ()), locale)
