"""Typed interrupts on a LangGraph server: a pending interrupt's request (with its
``response_schema``), and an answer the graph rejected asked again, never reported as a failure;
the question a thread waits for (``waiting_asked``, for ``clarigate chat`` going on with one).

A typed interrupt (``interrupt(value, response_schema=Model)``) checks its answer when the run
resumes; an answer that does not match raises a validation error, the run ends in ``error`` and
the interrupt stays pending with nothing saved (``is_invalid_resume`` in process). The server
shows this as the failed run's task error; the question is then asked again with the person's
answer filled in and each problem named (``clarigate.agent.typed_interrupts.rejected_asked``).
A declined answer (Cancel, ``/cancel``) the schema rejects is never asked again: the question
stays closed, the interrupt pending, and the next message runs over it (``server_supersede``).
One the schema does not take as the gateway checks it (``typed_interrupts.schema_takes``) is never
sent: no run resumes it. What the thread waits for (``waiting_asked``) leaves such an interrupt
out: the metadata of the failed run that resumed it with the declined answer, or the thread's
(``DISMISSED_KEY``) when none did, says it was dismissed, kept on the server where every replica
reads it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.interrupt_kinds import asked_again as with_new_id
from clarigate.agent.interrupts import (
    AskAgain,
    Asked,
    Dismissed,
    NotApproved,
    asked_for,
    parse_request_id,
    request_for,
    resume_value,
)
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse
from clarigate.agent.typed_interrupts import VALIDATION_HEAD, rejected_asked
from clarigate.gateway.runners.server_attachments import NOTE_KEY, carried_on_server
from clarigate.gateway.runners.server_breakpoints import breakpoint_question
from clarigate.gateway.runners.server_not_approved import turn_down_on_server
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
#: Thread metadata: the pending interrupts whose question was closed without a run (a declined
#: answer their schema does not take).
DISMISSED_KEY = "clarigate_dismissed"


def pending_request_of(interrupt: Mapping[str, Any], messages: list[Any]) -> HumanInputRequest:
    """The request showing a pending interrupt of the thread's state (``id``, ``value`` and, since
    langgraph 1.2, ``response_schema``)."""
    schema = interrupt.get("response_schema")
    return request_for(str(interrupt.get("id")), interrupt.get("value"), thread_locale(messages), schema)


def pending_asked_of(interrupt: Mapping[str, Any], messages: list[Any]) -> Asked:
    """``pending_request_of``, and what the request cannot hold in full, to show right above it
    (``clarigate.agent.interrupts.asked_for``: an approval's long calls, a long text)."""
    schema = interrupt.get("response_schema")
    return asked_for(str(interrupt.get("id")), interrupt.get("value"), thread_locale(messages), schema)


def _task_error(state: Mapping[str, Any], interrupt_id: str) -> str | None:
    """The error of the task that holds interrupt ``interrupt_id``, when it failed."""
    for task in state.get("tasks") or []:
        ids = {i.get("id") for i in task.get("interrupts") or [] if isinstance(i, Mapping)}
        if interrupt_id in ids and isinstance(task.get("error"), str):
            return str(task["error"])
    return None


def _refused_by(schema: Any, error: str) -> bool:
    """True when ``error`` (a failed task's) is the interrupt's own check of its answer against
    ``schema``: a validation error naming the schema's model (its title), as ``is_invalid_resume``
    tells in process; not one the graph's code raised after the answer was taken (a model of its
    own), which is a failure like any other. A schema with no title is not second-guessed."""
    head = VALIDATION_HEAD.match(error)
    title = schema.get("title") if isinstance(schema, Mapping) else None
    if head is None or not isinstance(title, str):
        return head is not None
    return error[head.end() :].splitlines()[0].strip() == title


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
        if interrupt_id not in resumed or not schema or not error or not _refused_by(schema, error):
            continue
        meta = finished.get("metadata") or {}
        if meta.get(DECLINED_KEY):
            log.info("interrupt %s refused the declined answer: the question is closed", interrupt_id)
            return TurnOutput(dismissed=True)
        locale = thread_locale(messages_of(state.get("values")))
        value = interrupt.get("value")
        again = rejected_asked(interrupt_id, value, schema, resumed[interrupt_id], error, locale)
        request = with_new_id(again.request, str(meta.get(ANSWERS_KEY) or ""))
        return Asked(request, again.in_full).output()  # what it cannot hold shown above it again
    return None


async def waiting_asked(
    client: Any, assistant_id: str, sid: str, state: Mapping[str, Any], *, above: bool
) -> Asked | None:
    """The question the server thread ``sid`` (its ``state``) waits for: a pending interrupt's,
    the last message's, or a static breakpoint's "Continue?"; None when there is none, or when
    the person dismissed one of the pending interrupts (its run stopped: every interrupt pending
    from it is closed with it, as in process: ``clarigate.agent.threads``). With
    ``above`` as the turn asked it: what the request cannot hold (a long text, an approval's
    calls) in full, to show right above it (``Asked.in_full``); else the request alone."""
    from clarigate.agent.middleware import above_in, request_in

    messages = messages_of(dict(state).get("values"))
    interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
    if interrupts:
        # one dismissed question stops its run: the others pending from it are closed with it
        if await dismissed_ids(client, sid) & {str(i.get("id")) for i in interrupts}:
            return None
        first = interrupts[0]
        return pending_asked_of(first, messages) if above else Asked(pending_request_of(first, messages))
    if messages and (asked := request_in(messages[-1])) is not None:
        return Asked(asked, above_in(messages[-1]) if above else None)
    request = await breakpoint_question(client, assistant_id, sid, state)
    return Asked(request) if request is not None else None


async def resumed_run(
    client: Any,
    assistant_id: str,
    sid: str,
    response: HumanInputResponse,
    state: Mapping[str, Any],
    options: dict[str, Any],
    sent: tuple[str, Sequence[ImageInput]] | None = None,
) -> Any:
    """The run resuming the interrupt ``response`` answers on server thread ``sid`` (its ``state``;
    made with ``options``; the answer's photos and files, ``sent`` with its text, going with it as
    in process or the person told: ``server_attachments``; for an approval no decision turns down,
    the run going on once its calls are answered: ``server_not_approved``), or the output that
    needs no run: the request asked again, the question closed (a declined answer the schema does
    not take, never sent; an approval whose calls cannot be answered there); None when it does not
    answer one the server still has pending."""
    parsed = parse_request_id(response.request_id)
    if parsed is None:
        return None
    kind, interrupt_id = parsed
    pending = {i.get("id"): i for i in state.get("interrupts") or [] if isinstance(i, Mapping)}
    if interrupt_id not in pending:
        log.warning("the answer is for interrupt %s, which the server no longer has pending", interrupt_id)
        return None
    asked, locale = pending[interrupt_id], thread_locale(messages_of(state.get("values")))
    schema = asked.get("response_schema")
    value = resume_value(kind, interrupt_id, asked.get("value"), response, locale, schema)
    carry = await carried_on_server(client, assistant_id, state, sent, locale)
    if isinstance(value, AskAgain):  # with what it cannot hold shown above it (an approval's calls)
        return carry.asked_again(value.output(), locale)
    refused = isinstance(value, NotApproved)  # no decision turns it down: its calls are answered
    if isinstance(value, NotApproved):
        turned = await turn_down_on_server(client, sid, state, {interrupt_id: value.message})
        value = value if turned else Dismissed()
    if isinstance(value, Dismissed):
        log.info("interrupt %s: the declined answer cannot resume it: the question is closed", interrupt_id)
        await close_dismissed(client, sid, interrupt_id, pending)
        return TurnOutput(dismissed=True)
    answered = {ANSWERS_KEY: response.request_id, DECLINED_KEY: response.response_kind == "declined"}
    noted = {NOTE_KEY: carry.note} if carry.note else {}
    options["metadata"] = {**options["metadata"], **answered, **noted}
    command: dict[str, Any] = {} if refused else {"resume": {interrupt_id: value}}  # refused: on from there
    if carry.update:
        command["update"] = carry.update
    return await client.runs.create(sid, assistant_id, **({"command": command} if command else {}), **options)


def _closed_in(thread: Mapping[str, Any]) -> list[str]:
    closed = (thread.get("metadata") or {}).get(DISMISSED_KEY)
    return [str(i) for i in closed] if isinstance(closed, list) else []


async def close_dismissed(client: Any, sid: str, interrupt_id: str, pending: Mapping[Any, Any]) -> None:
    """Record in server thread ``sid``'s metadata, which every replica reads, that the question of
    interrupt ``interrupt_id`` is closed though no run resumed it; of those recorded before, only
    the ones still ``pending`` (by id) are kept."""
    kept = [i for i in _closed_in(await client.threads.get(sid)) if i in pending and i != interrupt_id]
    await client.threads.update(sid, metadata={DISMISSED_KEY: [*kept, interrupt_id]})


async def dismissed_ids(client: Any, sid: str) -> set[str]:
    """The interrupts of server thread ``sid`` whose question the person dismissed and whose graph
    refused the declined answer: a run resuming one with a declined answer ended in error, or the
    thread's metadata says so (``close_dismissed``: no run resumed it)."""
    closed: set[str] = set(_closed_in(await client.threads.get(sid)))
    for run in await client.runs.list(sid, limit=RUNS_SEARCHED):
        meta = run.get("metadata") or {}
        parsed = parse_request_id(str(meta.get(ANSWERS_KEY) or ""))
        if run.get("status") == "error" and meta.get(DECLINED_KEY) and parsed is not None:
            closed.add(parsed[1])
    return closed
