"""A server run followed to its end, its output read from the thread, and a run the server lost.

A LangGraph server that crashes (``kill -9``, the OOM killer) and starts again may not know the
run the gateway was following any more: ``langgraph dev`` writes its threads and runs to disk
every 10 s and its checkpoints only when it stops cleanly, so a kill loses what came after the
last write and every thread's history; a deployment's worker that dies leaves its run to be
retried. So a run whose stream ends in ``404 Run not found``, or that is gone or still unfinished
when its stream ends, is ``RunLost``, and the runner looks at the thread again (``left_of_turn``):

- the run is there again (the server retries a run it had written): it is joined;
- the turn's input is in the thread (its human message; an answer's interrupt no longer pending
  while the thread still holds the checkpoint the run began at, or a later one) and the thread
  was cut off with steps left: the run goes on from the last checkpoint (a run without input);
- the turn's input is in the thread and the run stopped on a breakpoint (its graph's, its run's
  or a subgraph's: ``server_breakpoints``): the person is asked "Continue?" as after a run that
  ended there (going on without input would pass the breakpoint, a decision the person did not
  make);
- the turn's input is in the thread and nothing is left to do: its output is read from the thread;
- an answer whose thread lost its history (``history_lost``): nothing is left to resume, so the
  person is told the server lost the conversation (``server_stops.lost_output``);
- the input is not in the thread (lost with the run, or the thread itself): the run is started
  again from the recorded input, unless the thread says someone cancelled it with ``rollback``,
  which deletes a run as a crash may (``server_stops``: the person is told it was stopped).

Either way the message is answered once. While the server is down the runner raises
``AgentUnavailable``, so the person is told once that the message is kept (``flow.outage``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import Any

import httpx

from clarigate.agent.bounded import BoundedDict
from clarigate.agent.breakpoints import (
    DROPPED_AS,
    breakpoint_request,
    goes_on,
    paused_at,
    stopped_from,
    stopped_reply,
)
from clarigate.agent.events import EventSink, tell
from clarigate.agent.interrupt_kinds import asking, parse_request_id
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.protocol import HumanInputResponse, render_text_fallback
from clarigate.agent.protocol.models import Locale
from clarigate.agent.turn_output import TurnOutput, before_turn, turn_output
from clarigate.gateway.boundary.errors import AgentUnavailable, RunFailed
from clarigate.gateway.runners.server_breakpoints import on_breakpoint
from clarigate.gateway.runners.server_interrupts import ANSWERS_KEY, asked_again, pending_asked_of
from clarigate.gateway.runners.server_stops import (
    UNFINISHED,
    cancelled_output,
    empty_answer_output,
    history_refused_output,
    recursion_output,
    timed_out_output,
)
from clarigate.gateway.runners.server_wire import events_of, messages_of, status_of
from clarigate.gateway.runtime import metrics

log = logging.getLogger(__name__)

#: Metadata keys the runner puts on server runs.
INBOUND_KEY = "clarigate_inbound_id"
#: The checkpoint the thread was at when the run began ("" for a thread without one): the run's
#: turn is the messages that checkpoint did not hold (found by id: ``new_messages``).
BEFORE_KEY = "clarigate_before"
START_KEY = "clarigate_start"  # the message count a run of an earlier gateway started after
HUMAN_KEY = "clarigate_human_id"
#: How many turns' runs a runner remembers (``BegunRuns``).
RUNS_REMEMBERED = 1000
#: Seconds of a silent stream after which the server is asked whether it is still there.
SILENCE_SECONDS = 2.0
#: How long the probe waits for ``/ok``.
PROBE_SECONDS = 3.0


class ServerProbe:
    """Whether the server is there: one ``/ok`` with a short timeout (the SDK's client tries a
    refused connection again for several seconds, which is what a server that is gone looks like)."""

    def __init__(self, url: str, api_key: str | None = None) -> None:
        headers = {"x-api-key": api_key} if api_key else {}
        self._http = httpx.AsyncClient(base_url=url, headers=headers, timeout=PROBE_SECONDS)

    async def alive(self) -> bool:
        """False when the server refuses the connection, cannot be reached, or a proxy in front of
        it says it is down (5xx); True otherwise (a slow answer is a busy server, not a gone one)."""
        try:
            answer = await self._http.get("/ok")
        except (httpx.ConnectError, httpx.ConnectTimeout):
            return False
        except httpx.HTTPError:
            return True
        return answer.status_code < 500

    async def aclose(self) -> None:
        """Close its HTTP client."""
        await self._http.aclose()


class RunLost(Exception):
    """The run the gateway followed is gone on the server, or its stream ended before the run."""


def _not_found(data: Any) -> bool:
    """True for a stream's ``error`` part saying the run is not there (``404 Run not found``)."""
    text = str(data.get("message") or data.get("error") or "") if isinstance(data, Mapping) else str(data)
    return "not found" in text.lower() or " 404" in f" {text}"


async def follow(
    client: Any,
    sid: str,
    run: Mapping[str, Any],
    on_event: EventSink | None,
    alive: Callable[[], Awaitable[bool]] | None = None,
) -> Any:
    """Follow the run's stream to its end, handing its text, steps and progress lines to
    ``on_event``; the ``error`` part it ended with, if any (``{"error": "GraphRecursionError",
    …}``, for ``finished_run``); ``RunLost`` when the server says it has no such run.

    A joined stream starts from the run's first event (``last_event_id="-1"``): a live
    message continued after a hand-over is rebuilt whole. While the stream is silent the server
    is asked whether it is there (``alive``, every ``SILENCE_SECONDS``): the SDK reconnects a
    dropped stream on its own for a while, and a server that is gone is ``AgentUnavailable`` at
    once, so the person is told their message is kept (``flow.outage``) instead of waiting.
    """
    started = time.perf_counter()
    heard = [time.monotonic()]
    errors: list[Any] = []
    reader = asyncio.ensure_future(_read(client, sid, run, on_event, heard, errors))
    try:
        while True:
            done, _ = await asyncio.wait({reader}, timeout=SILENCE_SECONDS)
            if done:
                reader.result()
                break
            silent = time.monotonic() - heard[0] >= SILENCE_SECONDS
            if silent and alive is not None and not await alive():
                raise AgentUnavailable(f"the LangGraph server went away during run {run['run_id']}")
    finally:
        if not reader.done():
            reader.cancel()
            with contextlib.suppress(BaseException):
                await reader
    metrics.AGENT_SERVER_RUN_SECONDS.observe(time.perf_counter() - started)
    return errors[-1] if errors else None


async def _read(
    client: Any,
    sid: str,
    run: Mapping[str, Any],
    on_event: EventSink | None,
    heard: list[float],
    errors: list[Any],
) -> None:
    try:
        async for part in client.runs.join_stream(sid, run["run_id"], last_event_id="-1"):
            heard[0] = time.monotonic()
            if part.event == "error":
                if _not_found(part.data):
                    raise RunLost(f"run {run['run_id']}: {part.data}")
                log.warning("run %s streamed an error: %s", run["run_id"], part.data)
                errors.append(part.data)
            elif on_event is not None:
                for event in events_of(part.event, part.data):
                    await tell(on_event, event)
    except Exception as exc:
        if status_of(exc) == 404:
            raise RunLost(f"run {run['run_id']}: {exc}") from exc
        raise


async def finished_run(
    client: Any, sid: str, run: Mapping[str, Any], locale: Locale, streamed_error: Any = None
) -> Mapping[str, Any] | TurnOutput:
    """The run as it ended; ``RunLost`` when the server has it no more or it has not ended yet,
    ``RunFailed`` when it ended in error, or the output in ``locale`` of a run that did not end as
    its graph planned: the question asked again when the error is the graph rejecting a typed
    answer (closed, when that answer was declined), the limit's sentence when it reached the
    recursion limit (``streamed_error``: the error part of its stream), the empty answer's words
    when its model answered with nothing, twice, that it was stopped
    when someone cancelled it on the server, or that it took too long when the server's own
    timeout stopped it (``server_stops``)."""
    try:
        finished = await client.runs.get(sid, run["run_id"])
    except Exception as exc:
        if status_of(exc) == 404:
            raise RunLost(f"run {run['run_id']} is gone") from exc
        raise
    status = finished.get("status")
    if status in UNFINISHED:
        raise RunLost(f"the stream of run {run['run_id']} ended while it was {status}")
    if status == "interrupted":  # cancelled on the server: no breakpoint, nothing to go on with
        log.warning("run %s was cancelled on the LangGraph server", run["run_id"])
        return cancelled_output(locale)
    if status == "timeout":  # the server's own timeout (``BG_JOB_TIMEOUT_SECS``) stopped it
        metrics.AGENT_SERVER_ERRORS.labels(kind="run_timeout").inc()
        return timed_out_output(str(run["run_id"]), locale)
    if status != "success":
        if (again := await asked_again(client, sid, finished)) is not None:
            return again  # the graph rejected the answer (``response_schema``): asked again, or closed
        if (limited := recursion_output(streamed_error, locale)) is not None:
            return limited
        if (empty := empty_answer_output(streamed_error, locale)) is not None:
            return empty  # the model answered with nothing, twice
        if (refused := await history_refused_output(client, sid, streamed_error, locale)) is not None:
            return refused  # the provider refused the thread's history: /new starts again
        metrics.AGENT_SERVER_ERRORS.labels(kind="run_" + str(status)).inc()
        raise RunFailed(
            f"run {run['run_id']} on the LangGraph server ended as {status!r}", run_id=run["run_id"]
        )
    return finished


def checkpoint_of(state: Mapping[str, Any]) -> str:
    """The id of the checkpoint a thread's ``state`` was read at ("" for a thread without one)."""
    return str((state.get("checkpoint") or {}).get("checkpoint_id") or "")


async def messages_before(
    client: Any, sid: str, meta: Mapping[str, Any], messages: list[Any]
) -> tuple[list[Any], list[Any]]:
    """The thread's messages when the run of ``meta`` began, ``messages`` being the thread's now:
    those up to the run's human message (``HUMAN_KEY``) while the thread holds it (it is known
    without asking the server), else those of the checkpoint the run began at (``BEFORE_KEY``)
    with what earlier runs wrote there still pending (``pending_before``); and those pending
    ones, which ``turn_output.new_messages`` recognises by what they say."""
    human = str(meta.get(HUMAN_KEY) or "")
    if human and (BEFORE_KEY not in meta or any(m.id == human for m in messages)):
        return before_turn(messages, human), []
    if BEFORE_KEY not in meta:  # a run an earlier gateway started, in flight across the upgrade
        return messages[: int(meta.get(START_KEY) or 0)], []
    at = str(meta[BEFORE_KEY] or "")
    began = await client.threads.get_state(sid, checkpoint_id=at) if at else {}
    pending = pending_before(began, meta)
    return [*messages_of(began.get("values")), *pending], pending


def pending_before(began: Mapping[str, Any], meta: Mapping[str, Any]) -> list[Any]:
    """The messages earlier runs wrote in the step the checkpoint ``began`` (a run resuming an
    interrupt began there, ``meta`` its metadata) stopped on: a parallel branch that replied while
    another asked, the branch an earlier answer resumed. The checkpoint read as it was does not
    apply them, and holds the writes of the task the run resumed (``ANSWERS_KEY``) too, which are
    the run's own. None for any other run: its first step's writes are pending there too."""
    parsed = parse_request_id(str(meta.get(ANSWERS_KEY) or ""))
    if parsed is None:
        return []
    tasks = [task for task in began.get("tasks") or [] if isinstance(task, Mapping)]
    earlier = [
        task
        for task in tasks
        if not any(isinstance(i, Mapping) and i.get("id") == parsed[1] for i in task.get("interrupts") or [])
    ]
    return [message for task in earlier for message in messages_of(task.get("result"))]


async def state_output(
    client: Any, sid: str, state: Mapping[str, Any], meta: Mapping[str, Any]
) -> TurnOutput:
    """The turn's output in the thread's ``state``: its replies among the messages the thread did
    not hold when the run of ``meta`` began (``messages_before``), and its question or pending
    interrupt."""
    messages = messages_of(dict(state).get("values"))
    output = turn_output(messages, *await messages_before(client, sid, meta, messages))
    interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
    request = None
    if interrupts and output.request is None:  # with what it cannot hold shown right above it
        return asking(output, pending_asked_of(interrupts[0], messages))
    if output.request is None and paused_at(state.get("next"), interrupts):  # a static breakpoint
        at = str((state.get("checkpoint") or {}).get("checkpoint_id"))
        request = breakpoint_request(at, list(state.get("next") or ()), thread_locale(messages))
    if request is not None:
        output = replace(output, request=request, fallback_text=render_text_fallback(request))
    return output


def history_lost(state: Mapping[str, Any], meta: Mapping[str, Any] | None) -> bool:
    """True when a thread's ``state`` holds no checkpoint, or one older than the checkpoint the
    run of ``meta`` began at (``BEFORE_KEY``; checkpoint ids sort by time): the server lost the
    thread's history (``langgraph dev`` killed before it saved it), what a question asked there
    waited on with it."""
    now, began = checkpoint_of(state), str((meta or {}).get(BEFORE_KEY) or "")
    return not now or now < began


def input_applied(state: Mapping[str, Any], meta: Mapping[str, Any], interrupt_id: str | None) -> bool:
    """True when the thread shows a lost run's input was taken: its human message is there, or
    the interrupt its answer resumed is no longer pending while the thread still holds the
    checkpoint the run began at or a later one (not ``history_lost``)."""
    if meta.get(HUMAN_KEY):
        return any(m.id == meta[HUMAN_KEY] for m in messages_of(state.get("values")))
    if interrupt_id is None or history_lost(state, meta):
        return False
    pending = {i.get("id") for i in state.get("interrupts") or [] if isinstance(i, Mapping)}
    return interrupt_id not in pending


def steps_left(state: Mapping[str, Any]) -> bool:
    """True when the thread was cut off with steps to run (not waiting on an interrupt)."""
    return bool(state.get("next")) and not state.get("interrupts")


class BegunRuns:
    """The metadata of the run each recent turn started in this process (by inbound id): where a
    lost run's turn begins in its thread, when no human message marks it (an interrupt resumed)."""

    def __init__(self, size: int = RUNS_REMEMBERED) -> None:
        self._runs: BoundedDict[str, dict[str, Any]] = BoundedDict(size)

    def remember(self, inbound_id: str | None, run: Any) -> None:
        """Keep the metadata of ``run``, which the turn ``inbound_id`` started (anything that is
        not a run, such as an output given without one, is not kept)."""
        if inbound_id and isinstance(run, Mapping):
            self._runs[inbound_id] = dict(run.get("metadata") or {})

    def run_of(self, inbound_id: str | None, human_id: str | None) -> dict[str, Any] | None:
        """The metadata of the run the turn started: remembered, else (a new message, whose human
        message id ``human_id`` is known) what it carried; None when neither is known."""
        if not inbound_id:
            return None
        found = self._runs.get(inbound_id)
        if found is None and human_id is not None:
            found = {INBOUND_KEY: inbound_id, HUMAN_KEY: human_id}
        return found


async def past_breakpoint(
    client: Any,
    assistant_id: str,
    sid: str,
    state: Mapping[str, Any],
    checkpoint_id: str,
    response: HumanInputResponse,
    options: dict[str, Any],
) -> Any:
    """The answer to a breakpoint question (``clarigate.agent.breakpoints``): *Continue* starts
    the run that goes on from where the graph stopped, *Stop* drops the steps that wait (the
    thread no longer paused there) and is the output saying so, then and when given again
    (``stopped_from``); None when the thread is no longer paused at that checkpoint (a new
    message then)."""
    at = (state.get("checkpoint") or {}).get("checkpoint_id")
    if str(at) == checkpoint_id and paused_at(state.get("next"), state.get("interrupts")):
        if goes_on(response):
            options["metadata"] = {**options.get("metadata", {}), BEFORE_KEY: checkpoint_id}
            return await client.runs.create(sid, assistant_id, input=None, **options)
        await client.threads.update_state(sid, None, as_node=DROPPED_AS, checkpoint_id=checkpoint_id)
    else:
        parent = (state.get("parent_checkpoint") or {}).get("checkpoint_id")
        source = (state.get("metadata") or {}).get("source")
        if goes_on(response) or not stopped_from(checkpoint_id, parent, source, state.get("next")):
            return None
        state = await client.threads.get_state(sid, checkpoint_id=checkpoint_id)  # where it stopped
    locale = thread_locale(messages_of(state.get("values")))
    return TurnOutput(replies=[stopped_reply(list(state.get("next") or ()), locale)])


async def left_of_turn(
    client: Any,
    assistant_id: str,
    sid: str,
    state: Mapping[str, Any],
    meta: Mapping[str, Any] | None,
    interrupt_id: str | None,
    options: Callable[[dict[str, Any]], dict[str, Any]],
) -> Any:
    """What is left of a turn whose run the server lost (``meta``: that run's metadata; the
    interrupt its answer resumed): a run going on from the thread's last checkpoint (made with
    ``options``), or the output the thread holds (its breakpoint question, when the run stopped
    on one); None when the turn's input is not in the thread (it runs again from the recorded
    input)."""
    if meta is None or not input_applied(state, meta, interrupt_id):
        return None
    inbound_id = meta.get(INBOUND_KEY)
    if not steps_left(state):
        log.warning("the run of %s is gone on the server; its output is in the thread", inbound_id)
        return await state_output(client, sid, state, meta)
    if await on_breakpoint(client, assistant_id, sid, state):
        log.warning("the run of %s is gone on the server; it stopped on a breakpoint", inbound_id)
        return await state_output(client, sid, state, meta)
    log.warning("the run of %s is gone on the server: going on from its last checkpoint", inbound_id)
    return await client.runs.create(sid, assistant_id, input=None, **options(dict(meta)))
