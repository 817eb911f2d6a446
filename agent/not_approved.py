"""An approval no decision can turn down (its review allows approve and edit only), turned down.

LangChain's ``HumanInTheLoopMiddleware`` refuses a decision its review does not allow (a
``ValueError`` in its batched step, the ``response_schema`` in a per-call one), so a Cancel, a
``/cancel`` or a new message over such an approval has no decision to resume it with
(``clarigate.agent.interrupt_kinds.NotApproved``). It is turned down all the same, without being
resumed: the thread's state is updated as the output of the step that waits on it
(``update_state(as_node=…)``), each call that step asks about answered with a tool result saying
why instead ("The person declined this action.", or that they wrote something else instead),
with the results of that step's calls that finished (a per-call step). The interrupted step never
runs again, so none of its calls runs: nothing the person did not approve runs (a per-call step's
other approvals are turned down with it; a call no review gates still runs, as after a
rejection). The run then goes on from there (no input), so the model reads why and replies.

When that cannot be done (the calls asked about are not in the thread's own messages, as for an
approval inside a subgraph of a graph of one's own, or the step is not one node's), nothing is
updated: the caller closes the question as a dismissed one (``clarigate.agent.dismissals``): its
task stops, the interrupt stays pending, never resumed, and the next message runs over it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from clarigate.agent.interrupt_kinds import NotApproved

__all__ = ["NotApproved", "StepTask", "not_approved_update", "turn_down"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class StepTask:
    """One task of the step a thread waits on, as its state shows it: the node, its interrupts
    (``(id, value)``) and the tool results it wrote when it finished."""

    name: str
    interrupts: Sequence[tuple[str, Any]] = ()
    results: Sequence[Any] = field(default_factory=list)


def _last_calls(messages: Sequence[Any]) -> tuple[list[dict[str, Any]], set[str]]:
    """The tool calls of the last AI message (with an id), and the ids the results after it answer."""
    from langchain_core.messages import AIMessage, ToolMessage

    index = next((i for i in range(len(messages) - 1, -1, -1) if isinstance(messages[i], AIMessage)), None)
    if index is None:
        return [], set()
    answered = {m.tool_call_id for m in messages[index + 1 :] if isinstance(m, ToolMessage)}
    return [dict(c) for c in messages[index].tool_calls if c.get("id")], answered


def _is_asked(call: Mapping[str, Any], asked: Mapping[str, Any]) -> bool:
    """True when ``call`` is the one ``asked`` names: a per-call approval by its ``tool_call_id``,
    a batched approval's action request by name and arguments."""
    if asked.get("type") == "tool_approval":
        return bool(call["id"] == asked.get("tool_call_id"))
    return bool(call["name"] == asked.get("name") and call.get("args") == asked.get("args"))


def _asked_about(value: Any, calls: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The ``calls`` an approval's ``value`` asks about, taken out of ``calls``; None when one of
    them is not among ``calls`` (or ``value`` is no approval's)."""
    if not isinstance(value, Mapping):
        return None
    batched = [r for r in value.get("action_requests") or [] if isinstance(r, Mapping)]
    found = []
    for asked in [value] if value.get("type") == "tool_approval" else batched:
        call = next((c for c in calls if _is_asked(c, asked)), None)
        if call is None:
            return None
        calls.remove(call)
        found.append(call)
    return found or None


def not_approved_update(
    messages: Sequence[Any], tasks: Iterable[StepTask], turned_down: Mapping[str, str]
) -> tuple[str, list[Any]] | None:
    """``(node, results)``: the update that turns down the approvals ``turned_down`` names
    (``{interrupt id: what the model reads}``) as the output of the step ``tasks`` (of a thread
    with ``messages``): that node, the tool results of its finished calls and one for each call its
    approvals ask about. None when that cannot be done (see the module's docstring)."""
    from langchain_core.messages import ToolMessage

    tasks = list(tasks)
    nodes = {task.name for task in tasks}
    held = [(i, v) for task in tasks for i, v in task.interrupts]
    if len(nodes) != 1 or not any(i in turned_down for i, _ in held):
        return None
    finished = [m for task in tasks for m in task.results if isinstance(m, ToolMessage)]
    every, answered = _last_calls(messages)
    answered |= {m.tool_call_id for m in finished}
    calls = [c for c in every if c["id"] not in answered]
    said = next(turned_down[i] for i, _ in held if i in turned_down)
    answers: dict[str, Any] = {}
    for interrupt_id, value in held:  # every approval of the step: none of its calls may run
        asked = _asked_about(value, calls)
        if asked is None:
            return None
        text = turned_down.get(interrupt_id, said)
        for call in asked:
            answers[call["id"]] = ToolMessage(
                content=text, tool_call_id=call["id"], name=call["name"], status="error"
            )
    order = {c["id"]: n for n, c in enumerate(every)}  # as the model made the calls
    return nodes.pop(), sorted([*finished, *answers.values()], key=lambda m: order.get(m.tool_call_id, -1))


def _step_of(snapshot: Any) -> list[StepTask]:
    """The tasks of the step an in-process thread's ``snapshot`` waits on."""
    tasks = []
    for task in getattr(snapshot, "tasks", ()) or ():
        written = task.result.get("messages") if isinstance(task.result, Mapping) else None
        results = written if isinstance(written, list) else [written] if written else []
        tasks.append(StepTask(task.name, [(i.id, i.value) for i in task.interrupts or ()], results))
    return tasks


async def turn_down(
    graph: Any, config: dict[str, Any], snapshot: Any, turned_down: Mapping[str, str]
) -> bool:
    """Turn down the approvals ``turned_down`` names on the in-process thread of ``config`` (its
    state: ``snapshot``): True when its state was updated (the run may go on, with no input);
    False when it cannot be (the caller closes the question as dismissed)."""
    thread_id = config["configurable"]["thread_id"]
    messages = snapshot.values.get("messages", []) if isinstance(snapshot.values, Mapping) else []
    update = not_approved_update(messages, _step_of(snapshot), turned_down)
    if update is None:
        log.warning(
            "thread %s: approval(s) %s cannot be turned down here: closed, never resumed",
            thread_id,
            list(turned_down),
        )
        return False
    node, results = update
    await graph.aupdate_state(config, {"messages": results}, as_node=node)
    log.info("thread %s: approval(s) %s turned down; their calls are not run", thread_id, list(turned_down))
    return True
