"""Whether a server thread is paused on one of its graph's static breakpoints.

A run that stopped on a breakpoint leaves the thread as one cut off mid-run does: steps pending
(``next``), no interrupt, the same checkpoint (LangGraph writes nothing more when it stops). What
tells them apart is the graph: the server marks its breakpoints in the assistant's graph
(``GET /assistants/{id}/graph``: a node's ``metadata.__interrupt`` is ``before``, ``after`` or
both). A run started with input never runs a step past a breakpoint of its graph, so a thread
paused before an ``interrupt_before`` step, or right after an ``interrupt_after`` one ran, stopped
there: it waits for the person ("Continue?"), and is never gone on with by itself. Going on
without input would pass the breakpoint (LangGraph resumes past the steps it stopped at).

Two more kinds of breakpoint leave the same state and are not in the graph's marks: one given to
a run (``interrupt_before=`` / ``interrupt_after=`` of ``runs.create``: the gateway sets none, but
a run started from LangGraph Studio may have left the thread there), told by the ``kwargs`` of the
run that wrote the checkpoint; and one of a subgraph, where the parent waits on the step that runs
it (its task has a ``checkpoint`` namespace) and the subgraph's own state (``get_state(subgraphs=
True)``) waits on a step the xray graph marks as ``<node>:<step>``. Going on from the parent's
checkpoint resumes the subgraph where it stopped.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.breakpoints import breakpoint_request, paused_at
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputRequest
from clarigate.gateway.runners.server_wire import messages_of, status_of

log = logging.getLogger(__name__)

INTERRUPT_MARK = "__interrupt"
#: A run's ``interrupt_before`` / ``interrupt_after`` that stops at every step.
ALL_STEPS = "*"


async def graph_breakpoints(
    client: Any, assistant_id: str, *, xray: bool = False
) -> tuple[set[str], set[str]] | None:
    """The steps the assistant's graph stops before and after (with ``xray``, its subgraphs'
    steps too, named ``<node>:<step>``); None when the server does not give the graph (a 4xx: a
    graph it cannot draw); a 5xx or a network error is raised."""
    try:
        graph = await client.assistants.get_graph(assistant_id, xray=xray)
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


async def run_breakpoints(client: Any, sid: str, state: Mapping[str, Any]) -> tuple[set[str], set[str]]:
    """The breakpoints the run that wrote the thread's checkpoint (its ``metadata.run_id``) was
    started with (``interrupt_before=`` / ``interrupt_after=`` of ``runs.create``, kept in the
    run's ``kwargs``; ``"*"``: every step); none when the server has no such run (it lost it)."""
    run_id = (state.get("metadata") or {}).get("run_id")
    if not run_id:
        return set(), set()
    try:
        run = await client.runs.get(sid, run_id)
    except Exception as exc:
        if status_of(exc) == 404:
            return set(), set()
        raise
    kwargs = run.get("kwargs") or {}
    return _names(kwargs.get("interrupt_before")), _names(kwargs.get("interrupt_after"))


def _names(steps: Any) -> set[str]:
    return {ALL_STEPS} if steps == ALL_STEPS else {str(step) for step in steps or ()}


def _marked(marks: set[str], steps: Sequence[str]) -> bool:
    return bool(steps) and (ALL_STEPS in marks or bool(marks.intersection(steps)))


async def _stopped_at(
    client: Any, sid: str, state: Mapping[str, Any], before: set[str], after: set[str]
) -> bool:
    """True when ``state`` (the thread's, or a subgraph's) waits before a step marked ``before``,
    or right after one marked ``after`` ran (the steps its parent checkpoint had pending)."""
    if _marked(before, list(state.get("next") or ())):
        return True
    parent = state.get("parent_checkpoint") or {}
    if not after or not parent.get("checkpoint_id"):
        return False
    if parent.get("checkpoint_ns"):  # a subgraph's checkpoint: asked for by its namespace
        ran = await client.threads.get_state(sid, checkpoint=parent)
    else:
        ran = await client.threads.get_state(sid, checkpoint_id=parent["checkpoint_id"])
    return _marked(after, list(ran.get("next") or ()))


async def _subgraph_stopped(
    client: Any, sid: str, state: Mapping[str, Any], marks: tuple[set[str], set[str]], path: str = ""
) -> bool:
    """True when a subgraph in ``state``'s pending tasks (``get_state(subgraphs=True)`` gives each
    one's state), or one nested in it, waits on a breakpoint of its own (``marks``: the xray
    graph's, whose subgraph steps are named ``<node>:<step>``). One stopped right after its last
    step has none left (``next`` empty) while its parent still waits on the step that runs it."""
    for task in state.get("tasks") or ():
        sub = task.get("state")
        if not isinstance(sub, Mapping) or sub.get("interrupts"):
            continue  # not begun, or waiting on an interrupt (asked as one)
        prefix = f"{path}{task.get('name')}:"
        before, after = ({m[len(prefix) :] for m in ms if m.startswith(prefix)} for ms in marks)
        if await _stopped_at(client, sid, sub, before, after):
            return True
        if await _subgraph_stopped(client, sid, sub, marks, prefix):
            return True
    return False


async def on_breakpoint(client: Any, assistant_id: str, sid: str, state: Mapping[str, Any]) -> bool:
    """True when the thread ``sid`` (its ``state``) is paused on a breakpoint: one of the
    assistant's graph, one its run was started with, or one of a subgraph the paused step runs;
    or may be (its graph could not be read: asking is the safe side)."""
    if not paused_at(state.get("next"), state.get("interrupts")):
        return False
    found = await graph_breakpoints(client, assistant_id)
    if found is None:
        return True
    run_before, run_after = await run_breakpoints(client, sid, state)
    if await _stopped_at(client, sid, state, found[0] | run_before, found[1] | run_after):
        return True
    if not any(task.get("checkpoint") for task in state.get("tasks") or ()):
        return False  # no step of it is a subgraph that began
    xray = await graph_breakpoints(client, assistant_id, xray=True)
    if xray is None:
        return True
    at = (state.get("checkpoint") or {}).get("checkpoint_id")
    full = await client.threads.get_state(sid, checkpoint_id=at, subgraphs=True)
    return await _subgraph_stopped(client, sid, full, xray)


async def breakpoint_question(
    client: Any, assistant_id: str, sid: str, state: Mapping[str, Any]
) -> HumanInputRequest | None:
    """The "Continue?" the thread ``sid`` waits for when paused on a breakpoint; None otherwise."""
    if not await on_breakpoint(client, assistant_id, sid, state):
        return None
    at = str((state.get("checkpoint") or {}).get("checkpoint_id"))
    locale = thread_locale(messages_of(state.get("values")))
    return breakpoint_request(at, list(state.get("next") or ()), locale)
