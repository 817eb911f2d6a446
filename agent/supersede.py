"""A new message over an open interrupt is a decision: the interrupt is resumed with a rejection.

A thread whose run waits on an ``interrupt()`` (an approval of ``HumanInTheLoopMiddleware``, a
question of the graph's own) and gets a new message instead of the answer would otherwise take
the message as fresh input: the interrupted step is dropped and the tool call it held is never
answered, which providers refuse (400) on every later request. So before the new message runs,
every pending interrupt is resumed with ``superseded_value`` (HITL: ``reject``, saying the person
wrote something else instead; any other: the declined answer with reason ``superseded``) and
that run goes to its end; its output is not shown (it is not the person's turn). A run that
stops on another interrupt is superseded again, up to ``MAX_ROUNDS`` times.

A typed interrupt whose ``response_schema`` does not take the declined answer is not resumed
(never with a value its schema refuses): the new message runs over it, which drops it. A
superseding run that fails in one of the graph's steps (a step that raised again, replayed with
the answer it failed on; a schema that refused the answer) is logged and the new message runs
anyway, as on a LangGraph server: its input drops the failed step, so no later message replays
it. A failure outside the graph's steps (the checkpointer) is raised: the message waits.

An approval whose review allows neither ``reject`` nor ``respond`` has no decision to stand for
the person's: it is turned down without being resumed (``clarigate.agent.not_approved``): its
calls are answered saying the person wrote something else instead, and that run goes to its end
as a superseding run does. Where that cannot be done, the new message runs over it: its calls
never run either.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from clarigate.agent.interrupt_kinds import Dismissed, NotApproved
from clarigate.agent.interrupts import superseded_value
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.not_approved import turn_down
from clarigate.agent.protocol.models import Locale

log = logging.getLogger(__name__)

#: How many interrupts in a row a new message supersedes before it runs anyway.
MAX_ROUNDS = 3


def resume_map(
    interrupts: Sequence[tuple[str, Any, Any]], locale: Locale
) -> tuple[dict[str, Any], dict[str, str]]:
    """For ``(id, value, response_schema)`` triples: ``{interrupt id: superseded value}``, one
    ``Command(resume=…)``, without those whose schema does not take the superseded value; and
    ``{interrupt id: what the model reads}`` for the approvals no decision turns down
    (``NotApproved``: answered without resuming them)."""
    resume, refused = {}, {}
    for interrupt_id, value, schema in interrupts:
        superseded = superseded_value(interrupt_id, value, locale, schema)
        if isinstance(superseded, NotApproved):
            refused[interrupt_id] = superseded.message
        elif isinstance(superseded, Dismissed):
            log.info("interrupt %s: its schema refuses the superseded answer: not resumed", interrupt_id)
        else:
            resume[interrupt_id] = superseded
    return resume, refused


def in_a_step(exc: BaseException) -> bool:
    """True when ``exc`` was raised by one of the graph's steps (LangGraph names the task it was
    raised in), not by the run around them (the checkpointer, the recursion limit)."""
    return any(str(note).startswith("During task with name") for note in getattr(exc, "__notes__", ()))


async def supersede_pending(
    graph: Any, config: dict[str, Any], invoke: Callable[[Any], Awaitable[Any]], snapshot: Any = None
) -> list[Any]:
    """Resume every interrupt the thread of ``config`` waits on as superseded (in process); the
    thread's messages afterwards (where the new message's turn begins).

    ``invoke(graph_input)`` runs the graph to its end on the thread (the harness's ``_invoke``);
    ``snapshot``: the thread's state read just before, if the caller has it (else it is read).
    """
    from langgraph.errors import is_invalid_resume
    from langgraph.types import Command

    thread_id = config["configurable"]["thread_id"]
    for _ in range(MAX_ROUNDS):
        if snapshot is None:
            snapshot = await graph.aget_state(config)
        interrupts = getattr(snapshot, "interrupts", ()) or ()
        pending = [(i.id, i.value, getattr(i, "response_schema", None)) for i in interrupts]
        messages = snapshot.values.get("messages", []) if isinstance(snapshot.values, Mapping) else []
        resume, refused = resume_map(pending, thread_locale(messages)) if pending else ({}, {})
        if refused and not await turn_down(graph, config, snapshot, refused):
            return messages  # the new message runs over them: none of their calls runs
        if not (resume or refused):  # none (left) that takes a superseded answer: it runs over them
            return messages
        log.info("thread %s: a new message supersedes interrupt(s) %s", thread_id, [*resume, *refused])
        try:
            await invoke(None if refused else Command(resume=resume))  # turned down: it goes on
        except Exception as exc:
            if not (is_invalid_resume(exc) or in_a_step(exc)):
                raise  # not the graph's (the checkpointer): the message waits
            log.warning(
                "thread %s: the run superseding interrupt(s) %s failed; the new message runs anyway",
                thread_id,
                [*resume, *refused],
                exc_info=not is_invalid_resume(exc),  # a refused answer is no failure to trace
            )
            return messages
        snapshot = None  # the run changed the thread: read it again
    snapshot = await graph.aget_state(config)
    if getattr(snapshot, "interrupts", ()):
        log.warning("thread %s still waits on an interrupt after %d rounds", thread_id, MAX_ROUNDS)
    return list(snapshot.values.get("messages", [])) if isinstance(snapshot.values, Mapping) else []
