"""A typed interrupt the person dismissed (Cancel, ``/cancel``) whose graph refused the declined
answer, or whose schema does not take it (``typed_interrupts.schema_takes``: never resumed with
it): its question is closed, though the interrupt stays pending (the next message runs over it,
``clarigate.agent.supersede``). The person is told the task stopped, and it has: the run cannot
get past the step that asked. What the thread waits for (``pending_request``, which ``clarigate
chat`` shows when it goes on with a thread) is then nothing, not even another interrupt pending
from the same run (a parallel step's, never asked): the next message starts afresh over them all.

In process the closure is kept with the thread in the checkpointer, so every replica sharing it
knows: the task's error (the validation error LangGraph saved for a failed attempt, or none) gets
a first line saying the question was dismissed. On a LangGraph server it is the failed run's
metadata, or the thread's when no run resumed it (``clarigate.gateway.runners.server_interrupts``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from langgraph.checkpoint.base import WRITES_IDX_MAP

log = logging.getLogger(__name__)

#: The first line of the task error of an interrupt closed as dismissed.
DISMISSED_MARK = "clarigate: the person dismissed this question; the graph refused the declined answer"
#: The channel of a task's error among a checkpoint's pending writes (``ERROR`` in LangGraph).
_ERROR = next(channel for channel, index in WRITES_IDX_MAP.items() if index == -1)


async def mark_dismissed(graph: Any, saver: Any, config: dict[str, Any], interrupt_id: str) -> None:
    """Record with the thread of ``config`` that interrupt ``interrupt_id`` was dismissed (its
    declined answer refused, by the graph or, before any run, by its schema): the error of the
    task holding it is saved again, marked (once: a Cancel delivered again finds it marked)."""
    snapshot = await graph.aget_state(config)
    for task in snapshot.tasks or ():
        if interrupt_id in {i.id for i in task.interrupts or ()}:
            if isinstance(task.error, str) and task.error.startswith(DISMISSED_MARK):
                return
            error = f"{DISMISSED_MARK}\n{task.error or ''}".rstrip()
            await saver.aput_writes(snapshot.config, [(_ERROR, error)], task.id)
            return
    log.warning("interrupt %s has no task to mark dismissed", interrupt_id)


def dismissed_ids(tasks: Iterable[Any]) -> set[str]:
    """The ids of the interrupts of a snapshot's ``tasks`` that were closed as dismissed."""
    return {
        i.id
        for task in tasks
        if isinstance(task.error, str) and task.error.startswith(DISMISSED_MARK)
        for i in task.interrupts or ()
    }
