"""Typed interrupts on a LangGraph server: a pending interrupt's request (with its
``response_schema``), and an answer the graph rejected asked again, never reported as a failure;
the question a thread waits for (``waiting_request``, for ``clarigate chat`` going on with one).

A typed interrupt (``interrupt(value, response_schema=Model)``) checks its answer when the run
resumes; an answer that does not match raises a validation error, the run ends in ``error`` and
the interrupt stays pending with nothing saved (``is_invalid_resume`` in process). The server
shows this as the failed run's task error; the question is then asked again with the person's
answer filled in and each problem named (``clarigate.agent.typed_interrupts.rejected_request``).
A declined answer (Cancel, ``/cancel``) the schema rejects is never asked again: the question
stays closed, the interrupt pending, and the next message runs over it (``server_supersede``).
What the thread waits for (``waiting_request``) leaves such an interrupt out: the metadata of the
failed run that resumed it with the declined answer says it was dismissed, kept on the server
where every replica reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from clarigate.agent.harness import TurnOutput
from clarigate.agent.interrupt_kinds import asked_again as with_new_id
from clarigate.agent.interrupts import parse_request_id, request_for
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputRequest, render_text_fallback
from clarigate.agent.typed_interrupts import VALIDATION_HEAD, rejected_request
from clarigate.gateway.runners.server_breakpoints import breakpoint_question
from clarigate.gateway.runners.server_wire import messages_of

log = logging.getLogger(__name__)

#: Run metadata: the request id of the answer a resuming run carries (a question asked again after
#: it takes an id of its own).
ANSWERS_KEY = "clarigate_answers"
#: Run metadata: true when that answer is a declined one (Cancel, ``/cancel``).
DECLINED_KEY = "clarigate_declined"
#: How many of a thread's latest runs are searched: for the one an inbound id started, for one
#: that closed a pending interrupt.
RUNS_SEARCHED = 20


def pending_request_of(interrupt: Mapping[str, Any], messages: list[Any]) -> HumanInputRequest:
    """The request showing a pending interrupt of the thread's state (``id``, ``value`` and, since
    langgraph 1.2, ``response_schema``)."""
    schema = interrupt.get("response_schema")
    return request_for(str(interrupt.get("id")), interrupt.get("value"), thread_locale(messages), schema)


def _task_error(state: Mapping[str, Any], interrupt_id: str) -> str | None:
    """The error of the task that holds interrupt ``interrupt_id``, when it failed."""
    for task in state.get("tasks") or []:
        ids = {i.get("id") for i in task.get("interrupts") or [] if isinstance(i, Mapping)}
        if interrupt_id in ids and isinstance(task.get("error"), str):
            return str(task["error"])
    return None


async def asked_again(client: Any, sid: str, finished: Mapping[str, Any]) -> TurnOutput | None:
    """The question again when the failed run ``finished`` resumed a typed interrupt with an
    answer its schema rejected (a declined answer: the question stays closed, never asked again,
    a ``dismissed`` output); None for any other failure."""
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
        meta = finished.get("metadata") or {}
        if meta.get(DECLINED_KEY):
            log.info("interrupt %s refused the declined answer: the question is closed", interrupt_id)
            return TurnOutput(dismissed=True)
        locale = thread_locale(messages_of(state.get("values")))
        value = interrupt.get("value")
        request = rejected_request(interrupt_id, value, schema, resumed[interrupt_id], error, locale)
        request = with_new_id(request, str(meta.get(ANSWERS_KEY) or ""))
        return TurnOutput(request=request, fallback_text=render_text_fallback(request))
    return None


async def waiting_request(
    client: Any, assistant_id: str, sid: str, state: Mapping[str, Any]
) -> HumanInputRequest | None:
    """The question the server thread ``sid`` (its ``state``) waits for: a pending interrupt's,
    the last message's, or a static breakpoint's "Continue?"; None when there is none."""
    from clarigate.agent.middleware import request_in

    messages = messages_of(dict(state).get("values"))
    interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
    if interrupts:
        closed = await dismissed_ids(client, sid)
        still_open = [i for i in interrupts if str(i.get("id")) not in closed]
        return pending_request_of(still_open[0], messages) if still_open else None
    if messages and (asked := request_in(messages[-1])) is not None:
        return asked
    return await breakpoint_question(client, assistant_id, sid, state)


async def dismissed_ids(client: Any, sid: str) -> set[str]:
    """The interrupts of server thread ``sid`` whose question the person dismissed and whose graph
    refused the declined answer: a run resuming one with a declined answer ended in error."""
    closed: set[str] = set()
    for run in await client.runs.list(sid, limit=RUNS_SEARCHED):
        meta = run.get("metadata") or {}
        parsed = parse_request_id(str(meta.get(ANSWERS_KEY) or ""))
        if run.get("status") == "error" and meta.get(DECLINED_KEY) and parsed is not None:
            closed.add(parsed[1])
    return closed
