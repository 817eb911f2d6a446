"""On a LangGraph server: an answer the graph rejected is asked again, never reported as a failure.

A typed interrupt (``interrupt(value, response_schema=Model)``) checks its answer when the run
resumes; an answer that does not match raises a validation error, the run ends in ``error`` and
the interrupt stays pending with nothing saved (``is_invalid_resume`` in process). The server
shows this as the failed run's task error; the question is then asked again with the person's
answer filled in and each problem named (``clarigate.agent.typed_interrupts.rejected_request``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clarigate.agent.harness import TurnOutput
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import render_text_fallback
from clarigate.agent.typed_interrupts import VALIDATION_HEAD, rejected_request
from clarigate.gateway.runners.server_wire import messages_of


def _task_error(state: Mapping[str, Any], interrupt_id: str) -> str | None:
    """The error of the task that holds interrupt ``interrupt_id``, when it failed."""
    for task in state.get("tasks") or []:
        ids = {i.get("id") for i in task.get("interrupts") or [] if isinstance(i, Mapping)}
        if interrupt_id in ids and isinstance(task.get("error"), str):
            return str(task["error"])
    return None


async def asked_again(client: Any, sid: str, finished: Mapping[str, Any]) -> TurnOutput | None:
    """The question again when the failed run ``finished`` resumed a typed interrupt with an
    answer its schema rejected; None for any other failure."""
    command = (finished.get("kwargs") or {}).get("command") or {}
    resumed = command.get("resume") if isinstance(command, Mapping) else None
    if not isinstance(resumed, Mapping):
        return None
    state = await client.threads.get_state(sid)
    for interrupt in state.get("interrupts") or []:
        interrupt_id, schema = str(interrupt.get("id")), interrupt.get("response_schema")
        error = _task_error(state, interrupt_id)
        if interrupt_id not in resumed or not schema or not error or not VALIDATION_HEAD.match(error):
            continue
        locale = thread_locale(messages_of(state.get("values")))
        value = interrupt.get("value")
        request = rejected_request(interrupt_id, value, schema, resumed[interrupt_id], error, locale)
        return TurnOutput(request=request, fallback_text=render_text_fallback(request))
    return None
