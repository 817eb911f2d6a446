"""On a LangGraph server: an approval no decision can turn down (approve and edit only), turned
down all the same, as in process (``clarigate.agent.not_approved``): the calls it asks about are
answered as the output of the step that waits on it (``threads.update_state(as_node=…)``), with
its finished calls' results, and a run with no input goes on from there (the caller's): the tool
never runs, and the model reads why."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from clarigate.agent.not_approved import StepTask, not_approved_update
from clarigate.gateway.runners.server_wire import messages_of

log = logging.getLogger(__name__)


def _step_of(state: Mapping[str, Any]) -> list[StepTask]:
    """The tasks of the step a server thread's ``state`` waits on."""
    tasks = []
    for task in state.get("tasks") or []:
        held = [
            (str(i.get("id")), i.get("value")) for i in task.get("interrupts") or [] if isinstance(i, Mapping)
        ]
        result = task.get("result") if isinstance(task.get("result"), Mapping) else {}
        written = result.get("messages")  # a finished task's writes: its calls' results
        written = written if isinstance(written, list) else [written] if written else []
        tasks.append(StepTask(str(task.get("name")), held, messages_of({"messages": written})))
    return tasks


async def turn_down_on_server(
    client: Any, sid: str, state: Mapping[str, Any], turned_down: Mapping[str, str]
) -> bool:
    """Turn down the approvals ``turned_down`` names on server thread ``sid`` (its ``state``):
    True when its state was updated (a run with no input goes on from there); False when it
    cannot be (``clarigate.agent.not_approved``: the question is closed as dismissed)."""
    update = not_approved_update(messages_of(state.get("values")), _step_of(state), turned_down)
    if update is None:
        log.warning("server thread %s: approval(s) %s cannot be turned down here", sid, list(turned_down))
        return False
    node, results = update
    values = {"messages": [message.model_dump() for message in results]}
    await client.threads.update_state(sid, values, as_node=node)
    log.info("server thread %s: approval(s) %s turned down; their calls are not run", sid, list(turned_down))
    return True
