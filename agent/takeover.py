"""A run cut off midway goes on where it stopped, and a tool it was running is not started twice.

When a replica dies while a run is in its tools step (an approved tool running, say), the
thread's last checkpoint holds the step before: the model's calls, and for an approval the
decision (``HumanInTheLoopMiddleware``'s step is checkpointed before the tools step starts). The
replica that takes the job over goes on from there without asking again. A call of that step
with no result yet may or may not have finished, so it is run again only when every such call's
tool is declared idempotent (``agent.idempotent_tools``); otherwise each gets an error result
saying the restart interrupted it, and the run goes on so the model can tell the person.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping
from typing import Any

from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import catalog
from clarigate.agent.turn_output import before_turn

log = logging.getLogger(__name__)

#: Checkpoint metadata (the run's config ``metadata`` is copied into each checkpoint it writes):
#: the turn whose run wrote it (the job's inbound id), and for a run that resumed an interrupt with
#: the person's answer, the id of the thread's last message before it ("" when there was none).
TURN_KEY = "clarigate_turn"
AFTER_KEY = "clarigate_answer_after"


def mark_answer(config: dict[str, Any], before: list[Any], written: list[Any]) -> None:
    """Have the checkpoints of the answer's run (``config``) say where its turn began: after the
    last message of ``before`` (the thread's when it resumes) that is no pending write (``written``,
    shown applied at its end with ids that change at every read)."""
    held = before[: len(before) - len(written)]
    if config.get("metadata") is not None and (not held or held[-1].id):
        config["metadata"][AFTER_KEY] = held[-1].id if held else ""


def answer_began(snapshot: Any, config: dict[str, Any]) -> list[Any] | None:
    """The thread's messages as the answer's turn found them, when ``snapshot`` (the thread's
    latest checkpoint) was written by an earlier attempt at this answer's turn: decided, then cut
    off (its replica died before it answered); None otherwise."""
    turn = (config.get("metadata") or {}).get(TURN_KEY)
    written_by = getattr(snapshot, "metadata", None) or {}
    if not turn or written_by.get(TURN_KEY) != turn or not isinstance(written_by.get(AFTER_KEY), str):
        return None
    values = snapshot.values if isinstance(snapshot.values, Mapping) else {}
    messages = list(values.get("messages", []))
    return before_turn(messages, written_by[AFTER_KEY]) if written_by[AFTER_KEY] else []


def _open_calls(messages: list[Any], finished: Collection[str]) -> list[dict[str, Any]]:
    """The last AI message's tool calls that have no result (in the thread or ``finished``)."""
    from langchain_core.messages import AIMessage, ToolMessage

    index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if index is None:
        return []
    answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)} | set(finished)
    return [dict(c) for c in messages[index].tool_calls if c.get("id") and c["id"] not in answered]


def _finished_results(snapshot: Any) -> list[Any]:
    """Tool messages of the step's tasks that finished before the cut (kept as pending writes)."""
    from langchain_core.messages import ToolMessage

    results: list[Any] = []
    for task in getattr(snapshot, "tasks", ()) or ():
        written = task.result.get("messages") if isinstance(task.result, Mapping) else None
        for message in written if isinstance(written, list) else [written] if written else []:
            if isinstance(message, ToolMessage):
                results.append(message)
    return results


async def settle_cut_off_calls(
    graph: Any, config: dict[str, Any], snapshot: Any, idempotent: Collection[str]
) -> None:
    """Before a run cut off in ``snapshot`` goes on: answer the calls it may have been running
    with "interrupted by a restart" unless every one of them is idempotent (then they run again)."""
    from langchain_core.messages import ToolMessage

    thread_id = config["configurable"]["thread_id"]
    steps = set(snapshot.next or ())
    messages = list(snapshot.values.get("messages", [])) if isinstance(snapshot.values, Mapping) else []
    finished = _finished_results(snapshot)
    calls = _open_calls(messages, {m.tool_call_id for m in finished})
    if len(steps) != 1 or not calls:
        return
    if all(c["name"] in idempotent for c in calls):
        names = [c["name"] for c in calls]
        log.info("thread %s: running %s again after a restart (idempotent)", thread_id, names)
        return
    locale = thread_locale(messages)
    results = list(finished)
    for call in calls:
        log.warning(
            "thread %s: tool %s (call %s) was running when the run was cut off; it is not run again "
            "(not in agent.idempotent_tools) and the model is told it may or may not have finished",
            thread_id,
            call["name"],
            call["id"],
        )
        text = catalog.text("call_cut_by_restart", locale, name=call["name"])
        results.append(ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error"))
    await graph.aupdate_state(config, {"messages": results}, as_node=steps.pop())
