"""Server runs that did not end as their graph planned, told as a person would be told in process.

- A run that reaches ``recursion_limit`` ends in ``error``, the last part of its stream naming
  ``GraphRecursionError``: the person reads the model-calls limit's sentence, as in process
  (``clarigate.agent.harness``), not "something went wrong" (trying again fails the same way).
- A run whose model answered with nothing, twice (``agent.empty_answers``), ends in ``error``,
  its stream's error part naming ``EmptyModelAnswer`` (the server keeps its message to itself):
  the person reads ``model_answer_empty`` and the log has a WARNING, as in process, not a failed
  run with its traceback.
- A run whose model provider refused the thread's history (a 400: a tool call of an operator's
  own graph left without its result when its tool raised) ends in ``error``, its stream's error
  part naming a 400 (the server keeps its message to itself) and the thread holding a tool call
  without its result: the person reads ``model_history_refused`` (send /new) and the
  log has one ERROR line saying why, as in process (``flow.model_failures``).
- A run someone stopped on the server (LangGraph Studio's Cancel, ``runs.cancel``): with
  ``action="interrupt"`` it ends ``interrupted``, its thread left with the stopped step pending
  as on a breakpoint, but none of the graph's (asking "Continue?" would run the step again);
  with ``action="rollback"`` the server deletes the run and what it wrote, which looks like a run
  lost in a crash but for the mark the cancel leaves on the thread: its ``error`` names
  ``UserRollback``, written when the run ended, so after the run was made (a crash leaves no
  such mark, and a lost run is started again: ``server_runs``). Either way the person is told
  the request was stopped there (``run_cancelled``) and nothing is started again.
- A run the gateway gives up on (``run_timeout_seconds``) is cancelled on the server
  (``cancel_unfinished``, ``action="interrupt"``): the person's "I stopped" is true, and the
  thread's next run is not queued behind it.
- A run the server gives up on itself (its background-job timeout, ``BG_JOB_TIMEOUT_SECS`` of
  ``langgraph-api``) ends ``timeout``: the person reads what they read when the gateway gives up
  (``run_too_long``), not "something went wrong".
- An answer to a question whose thread the server lost (``server_runs.history_lost``: a
  ``langgraph dev`` killed before it saved its checkpoints, the run resuming it gone too): the
  person reads that the server lost the conversation (``server_lost_thread``), never a fresh
  thread holding only their answer, nor "something went wrong".
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from datetime import datetime
from functools import partial
from typing import Any

from clarigate.agent.limits import limit_message
from clarigate.agent.protocol import catalog
from clarigate.agent.protocol.models import Locale
from clarigate.agent.turn_output import TurnOutput
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.model_failures import NOTICES, refuses_history
from clarigate.gateway.runners.server_interrupts import RUNS_SEARCHED
from clarigate.gateway.runners.server_wire import messages_of, status_of, unavailable

log = logging.getLogger(__name__)

#: Run states that are not over yet.
UNFINISHED = ("pending", "running")
#: The error a thread holds after its run reached the recursion limit.
RECURSION = "GraphRecursionError"
#: The error a run's stream ends with after its model answered with nothing, twice.
EMPTY_ANSWER = "EmptyModelAnswer"
#: Words for a model answering with nothing, twice (in process too: ``flow.model_failures``).
ANSWER_EMPTY = "model_answer_empty"
#: The error a thread holds after its run was cancelled with ``action="rollback"``.
ROLLED_BACK = "UserRollback"
#: The errors a provider's 400 is raised as (``langchain_openai``'s, the SDKs' own).
BAD_REQUEST = ("BadRequestError", "InvalidRequestError")
#: Words for a run stopped on the server (``catalog``).
CANCELLED = "run_cancelled"
#: Words for a run the server's own timeout stopped: the gateway's, for its own run timeout.
TIMED_OUT = "run_too_long"
#: Words for an answer whose thread the server lost.
LOST = "server_lost_thread"
#: Calls that cancel a run the gateway gave up on: a server that does not answer is tried again
#: for a few seconds (``unavailable``), a refusal is not.
CANCEL_RETRIES = RetryPolicy(first=0.25, cap=1.0, within=4.0)
#: How long giving up on a run may take in all (the SDK retries a refused connection for seconds).
CANCEL_SECONDS = 8.0


def _error_name(error: Any) -> str:
    """The exception's name in a stream's ``error`` part or a thread's ``error``."""
    return str(error.get("error") or "") if isinstance(error, Mapping) else ""


def recursion_output(streamed_error: Any, locale: Locale) -> TurnOutput | None:
    """The output of a run that reached the recursion limit (``streamed_error``: the error part
    its stream ended with); None for any other failure."""
    if _error_name(streamed_error) != RECURSION:
        return None
    log.warning("a server run reached the recursion limit: %s", streamed_error.get("message"))
    return TurnOutput(replies=[limit_message("model_calls", locale)], limit="recursion")


def empty_answer_output(streamed_error: Any, locale: Locale) -> TurnOutput | None:
    """The output of a run whose model answered with nothing, twice (``streamed_error``: the
    error part its stream ended with); None for any other failure."""
    if _error_name(streamed_error) != EMPTY_ANSWER:
        return None
    log.warning("model call failed on a server run: %s (its answer was empty, twice)", EMPTY_ANSWER)
    return TurnOutput(replies=[catalog.text(ANSWER_EMPTY, locale)])


async def history_refused_output(
    client: Any, sid: str, streamed_error: Any, locale: Locale
) -> TurnOutput | None:
    """The output of a run on thread ``sid`` whose model provider refused the thread's history
    (``streamed_error``: the error part its stream ended with); None for any other failure. The
    server keeps a provider's message to itself ("An internal error occurred"): a 400 (the
    error's name) on a thread holding a tool call without its result is that refusal."""
    if not _error_name(streamed_error).endswith(BAD_REQUEST):
        return None
    if not refuses_history(str(streamed_error.get("message"))):
        try:
            state = await client.threads.get_state(sid)
        except Exception:  # the server's answer decides nothing here: the failure stays a failure
            return None
        if not _unanswered_calls(messages_of(state.get("values"))):
            return None
    log.error(  # not the message: it may hold a half-masked key
        "model call failed on a server run: %s 400 (history refused by the provider: a tool call "
        "without its result; the conversation needs /new)",
        _error_name(streamed_error),
    )
    return TurnOutput(replies=[catalog.text(NOTICES["history"], locale)])


def _unanswered_calls(messages: list[Any]) -> bool:
    """Whether an AI message of ``messages`` holds a tool call that no tool message answers."""
    from langchain_core.messages import AIMessage, ToolMessage

    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    calls = [c for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    return any(c.get("id") not in answered for c in calls)


def cancelled_output(locale: Locale) -> TurnOutput:
    """What the person reads of a run stopped on the server: that it was, and nothing else."""
    return TurnOutput(replies=[catalog.text(CANCELLED, locale)], notice_only=True)


def timed_out_output(run_id: str, locale: Locale) -> TurnOutput:
    """What the person reads of run ``run_id``, stopped by the server's own timeout: that it
    took too long, as when the gateway gives up on a run."""
    log.warning("run %s took longer than the LangGraph server allows (its BG_JOB_TIMEOUT_SECS)", run_id)
    return TurnOutput(replies=[catalog.text(TIMED_OUT, locale)], notice_only=True)


def lost_output(locale: Locale) -> TurnOutput:
    """What the person reads of an answer whose thread the server lost: that it did, nothing
    else (no question is left open: nothing on the server waits for one)."""
    return TurnOutput(replies=[catalog.text(LOST, locale)], notice_only=True)


def _when(value: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


async def rolled_back(client: Any, sid: str, run: Mapping[str, Any]) -> bool:
    """True when ``run``, gone from the server, was cancelled with ``action="rollback"``: the
    thread's error names ``UserRollback`` and was written after the run was made (a mark an
    earlier run left is older; one whose time cannot be read is taken as the run's)."""
    try:
        thread = await client.threads.get(sid)
    except Exception as exc:
        if status_of(exc) == 404:
            return False  # the thread went with the run: lost, not cancelled
        raise
    if _error_name(thread.get("error")) != ROLLED_BACK:
        return False
    marked = _when(thread.get("state_updated_at") or thread.get("updated_at"))
    made = _when(run.get("created_at"))
    return marked is None or made is None or marked >= made


async def cancel_unfinished(
    client: Any, sid: str, mine: Callable[[Mapping[str, Any]], bool], stopped: bool = False
) -> None:
    """Cancel (``action="interrupt"``) the runs of thread ``sid`` not over yet whose metadata
    ``mine`` takes (``stopped``: the person stopped them, not the gateway's time limit); a failure
    is logged, never raised (the person is told the run stopped)."""
    try:
        await asyncio.wait_for(_cancel(client, sid, mine, stopped), CANCEL_SECONDS)
    except Exception as exc:
        log.warning("could not cancel the runs of server thread %s: %s", sid, exc)


async def _cancel(client: Any, sid: str, mine: Callable[[Mapping[str, Any]], bool], stopped: bool) -> None:
    try:
        runs = await CANCEL_RETRIES.call(
            lambda: client.runs.list(sid, limit=RUNS_SEARCHED), retry_on=unavailable
        )
    except Exception as exc:
        if status_of(exc) == 404:
            return  # no such thread: nothing runs on it
        raise
    for run in runs:
        if run.get("status") not in UNFINISHED or not mine(run.get("metadata") or {}):
            continue
        try:
            cancel = partial(client.runs.cancel, sid, run["run_id"], action="interrupt")
            await CANCEL_RETRIES.call(cancel, retry_on=unavailable)
        except Exception as exc:
            if status_of(exc) not in (404, 409):
                raise
            continue  # it ended meanwhile: nothing left to stop
        if stopped:
            log.info("run %s on server thread %s cancelled: stopped by /cancel", run["run_id"], sid)
        else:
            log.warning("run %s on server thread %s cancelled: the gateway gave up on it", run["run_id"], sid)
