"""The LangGraph server runner: the agent runs on a LangGraph server, the gateway is its channel layer.

Chosen by ``agent.server_url`` (``LANGGRAPH_URL``); talks to the server with the official
``langgraph-sdk`` client. Nothing above ``clarigate.gateway.runners.base.AgentRunner`` changes.

- Threads: the gateway's agent thread id (kept in the Redis thread map) names the server
  thread (as a UUID); it is created on first use with metadata (platform, chat, bot id)
  so the server's own UI and APIs can find a conversation. ``/new`` maps a chat thread to
  a new agent thread id, so to a new server thread.
- Runs: one background run per inbound message, carrying the inbound id in its metadata.
  A job that is delivered again (a crash, a hand-over, a retry after the server was down)
  finds the run it started on the thread and joins it instead of starting a second one.
  The run is followed with ``runs.join_stream`` (values and updates), then the thread's
  state gives the turn's replies, its ``ask_clarification`` request, or an interrupt (shown
  as a clarification by ``clarigate.agent.interrupts``); an answer to an interrupt resumes the run
  with ``Command(resume=...)``.
- Failures: an unreachable server, a timeout or a 5xx raise ``AgentUnavailable`` (the job is
  kept and runs once the server is back); a run that ends in error raises ``RunFailed``
  naming the server's run id.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any
from urllib.parse import urlsplit

import httpx

from clarigate.agent import placement
from clarigate.agent.events import EventSink
from clarigate.agent.harness import ImageInput, TurnOutput, turn_output
from clarigate.agent.interrupts import AskAgain, parse_request_id, request_for, resume_value
from clarigate.agent.models.conversation import thread_locale
from clarigate.agent.placement import SettingsDoNotApply
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, render_text_fallback
from clarigate.agent.protocol.wire import response_kwargs
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.base import AgentRunner, AgentUnavailable, RunFailed, RunInput
from clarigate.gateway.runners.server_settings import run_settings, runs_shipped_graph
from clarigate.gateway.runners.server_supersede import supersede_on_server
from clarigate.gateway.runners.server_wire import events_of, human_content, messages_of
from clarigate.gateway.runtime import metrics

log = logging.getLogger(__name__)

#: Metadata keys the runner puts on server runs and threads.
INBOUND_KEY = "clarigate_inbound_id"
START_KEY = "clarigate_start"  # messages the thread held before the run (where its turn begins)
HUMAN_KEY = "clarigate_human_id"
#: How many of a thread's latest runs are searched for the one an inbound id started.
RUNS_SEARCHED = 20
#: How long the start waits for the server's answer: a server that is down (the SDK retries its
#: connection for ~8 s) does not hold the start, and messages are kept until it answers.
START_CHECK_SECONDS = 2.0
_NAMESPACE = uuid.UUID("6f0d3c1e-6c1b-4d59-9b7c-3a1f0f9a2c41")


def server_thread_id(thread_id: str) -> str:
    """The server thread for a gateway agent thread: the id itself when it is a UUID, else a UUID
    derived from it (servers accept UUIDs only)."""
    try:
        return str(uuid.UUID(thread_id))
    except ValueError:
        return str(uuid.uuid5(_NAMESPACE, thread_id))


def human_message_id(inbound_id: str | None) -> str:
    """The id of the human message a run adds: derived from the inbound id, so a joined run's
    turn can be found again; random when there is none."""
    return str(uuid.uuid5(_NAMESPACE, inbound_id)) if inbound_id else str(uuid.uuid4())


def _status(exc: BaseException) -> int | None:
    response = getattr(exc, "response", None)
    return getattr(response, "status_code", None)


def _unavailable(exc: BaseException) -> bool:
    """True for failures that mean "try again later": network, timeout, 5xx, 429."""
    if isinstance(exc, httpx.TransportError | asyncio.TimeoutError):
        return True
    status = _status(exc)
    return status is not None and (status >= 500 or status == 429)


class LangGraphServerRunner(AgentRunner):
    """The agent on a LangGraph server (``langgraph-sdk``)."""

    ready_name = "agent_server"  # what ``/readyz`` calls it when it does not answer

    def __init__(
        self,
        settings: AgentOptions,
        *,
        api_key: str | None = None,
        bot_id: str = "clarigate",
        timeout_seconds: float = 30.0,
    ) -> None:
        """``settings`` name the server (``server_url``) and the assistant (``assistant_id``);
        ``api_key`` comes from the environment only; ``bot_id`` goes on the threads it makes;
        ``timeout_seconds`` bounds one HTTP call (the run itself is followed as a stream)."""
        from langgraph_sdk import get_client

        if not settings.server_url:
            raise ValueError("the LangGraph server runner needs agent.server_url (LANGGRAPH_URL)")
        self.settings = settings
        self.url = settings.server_url
        self.shipped: bool | None = None  # the assistant runs clarigate's server graph (once checked)
        self._answered = False  # the server answered ``/ok`` in the last ``check``
        self._started = False
        self.bot_id = bot_id
        self._client = get_client(
            url=self.url,
            api_key=api_key,
            # connect, read, write, pool: no read timeout, since a run's stream waits for the model
            timeout=(timeout_seconds, None, timeout_seconds, timeout_seconds),
        )

    async def start(self) -> None:
        """Check the server: a refused key or an unknown assistant stops the start; a server that
        does not answer yet only makes ``/readyz`` fail (messages are kept until it answers).
        Once started, a second call does nothing (the server is not asked twice)."""
        if self._started:
            return
        try:
            problems = await asyncio.wait_for(self.check(), START_CHECK_SECONDS)
        except TimeoutError:
            where = f"{self.ready_where} (agent.server_url / LANGGRAPH_URL)"
            problems = [f"the LangGraph server at {where} does not answer yet"]
        if problems and self.shipped is not None:  # the server answered: settings that do not apply
            raise SettingsDoNotApply(problems)
        if problems and self._answered:  # it answers, but not for this assistant
            raise RuntimeError("; ".join(problems))
        self._started = True
        for problem in problems:
            log.warning("%s: messages wait until it answers", problem)
        log.info(
            "agent runs on the LangGraph server at %s (assistant %s)",
            self.url,
            self.settings.assistant_id,
        )

    async def check(self) -> list[str]:
        """What is wrong with the server settings (for ``doctor``): URL, key, assistant."""
        s, url = self.settings, self.url
        self._answered = False
        try:
            await self._client.http.get("/ok")
            self._answered = True
        except Exception as exc:
            if _status(exc) in (401, 403):
                return [f"the LangGraph server at {url} refused the API key (LANGGRAPH_API_KEY)"]
            return [
                f"the LangGraph server at {url} does not answer (agent.server_url / LANGGRAPH_URL): {exc}"
            ]
        try:
            found = await self._assistant_exists(s.assistant_id)
        except Exception as exc:
            if _status(exc) in (401, 403):
                return [f"the LangGraph server at {url} refused the API key (LANGGRAPH_API_KEY)"]
            return [f"could not list the assistants of {url}: {exc}"]
        if not found:
            return [
                f"the LangGraph server at {url} has no assistant or graph {s.assistant_id!r} (agent.assistant_id)"  # noqa: E501
            ]
        self.shipped = await runs_shipped_graph(self._client, s.assistant_id)
        return placement.problems(s, placement.place_of(s, shipped=self.shipped))

    async def _assistant_exists(self, assistant_id: str) -> bool:
        try:
            await self._client.assistants.get(assistant_id)
            return True
        except Exception as exc:
            if _status(exc) not in (404, 422):
                raise
        try:
            return bool(await self._client.assistants.search(graph_id=assistant_id, limit=1))
        except Exception as exc:
            if _status(exc) == 404:  # "Graph '…' not found"
                return False
            raise

    @property
    def ready_where(self) -> str:
        """Where ``/readyz`` looked for the server: its URL without credentials."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]  # user and password left out
        return parts._replace(netloc=host).geturl()

    async def ping(self) -> bool:
        """True when the server answers ``/ok`` (for ``/readyz``, which says when it stops)."""
        try:
            await self._client.http.get("/ok")
            return True
        except Exception as exc:
            log.debug("the LangGraph server at %s does not answer: %s", self.ready_where, exc)
            return False

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The clarification the server thread of ``thread_id`` waits for: a pending interrupt's,
        or the last message's; None when there is none or the server has no such thread."""
        from clarigate.agent.middleware import request_in

        try:
            state = await self._client.threads.get_state(server_thread_id(thread_id))
        except Exception as exc:
            if _status(exc) == 404:
                return None
            raise
        messages = messages_of(dict(state).get("values"))
        interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
        if interrupts:
            first = interrupts[0]
            return request_for(str(first.get("id")), first.get("value"), thread_locale(messages))
        return request_in(messages[-1]) if messages else None

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.http.client.aclose()

    # --- one turn --------------------------------------------------------------------------

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """One run on the server thread mapped to ``run.thread_id`` (joined when it was started
        before); its streamed text and steps go to ``run.on_event`` as the server sends them."""
        meta = dict(run.metadata)
        sid = server_thread_id(run.thread_id)
        try:
            return await self._turn(sid, run.text, run.response, run.images, meta, run.on_event)
        except (AgentUnavailable, RunFailed):
            raise
        except Exception as exc:
            if _unavailable(exc):
                metrics.AGENT_SERVER_ERRORS.labels(kind="unavailable").inc()
                raise AgentUnavailable(f"the LangGraph server at {self.url} is unavailable: {exc}") from exc
            raise

    async def _turn(
        self,
        sid: str,
        text: str,
        response: HumanInputResponse | None,
        images: Sequence[ImageInput],
        meta: dict[str, Any],
        on_event: EventSink | None = None,
    ) -> TurnOutput:
        inbound_id = meta.get("inbound_id")
        run = await self._started_run(sid, inbound_id, meta)
        if run is None:
            state = await self._client.threads.get_state(sid)
            before = messages_of(state.get("values"))
            started = await self._start(sid, text, response, images, meta, state, before)
            if isinstance(started, TurnOutput):
                return started  # answered without a run (Edit: the arguments form)
            run = started
        else:
            log.info("joining run %s started for %s before", run["run_id"], inbound_id)
        await self._follow(sid, run, on_event)
        return await self._output(sid, run)

    async def _started_run(self, sid: str, inbound_id: str | None, meta: Mapping[str, Any]) -> Any | None:
        """The run this inbound id started on the thread, if any; makes the thread on first use."""
        try:
            runs = await self._client.runs.list(sid, limit=RUNS_SEARCHED)
        except Exception as exc:
            if _status(exc) != 404:
                raise
            await self._client.threads.create(
                thread_id=sid, metadata=self._thread_metadata(meta), if_exists="do_nothing"
            )
            return None
        if inbound_id is None:
            return None
        return next((r for r in runs if (r.get("metadata") or {}).get(INBOUND_KEY) == inbound_id), None)

    def _thread_metadata(self, meta: Mapping[str, Any]) -> dict[str, Any]:
        keep = {k: meta[k] for k in ("platform", "chat_id", "workspace", "topic") if meta.get(k)}
        return {**keep, "bot_id": self.bot_id, "source": "clarigate"}

    async def _start(
        self,
        sid: str,
        text: str,
        response: HumanInputResponse | None,
        images: Sequence[ImageInput],
        meta: dict[str, Any],
        state: Mapping[str, Any],
        before: list[Any],
    ) -> Any:
        run_meta: dict[str, Any] = {
            **self._thread_metadata(meta),
            START_KEY: len(before),
            **({INBOUND_KEY: meta["inbound_id"]} if meta.get("inbound_id") else {}),
        }
        options: dict[str, Any] = {
            "metadata": run_meta,
            "multitask_strategy": "enqueue",
            # what each step changed and the model's tokens as written; the state is read at the end
            "stream_mode": ["updates", "messages-tuple"],
            "stream_resumable": True,
            **run_settings(self.settings, self.shipped),
        }
        if response is not None and (resumed := await self._resume(sid, response, state, before, options)):
            return resumed
        # a new message over open interrupts: they are resumed as superseded first (their runs are
        # waited for, never shown: ``server_supersede``)
        settings = run_settings(self.settings, self.shipped)
        state, before = await supersede_on_server(
            self._client, sid, self.settings.assistant_id, state, before, run_meta, settings
        )
        human_id = human_message_id(meta.get("inbound_id"))
        run_meta[HUMAN_KEY] = human_id
        human: dict[str, Any] = {"type": "human", "id": human_id, "content": human_content(text, images)}
        if response is not None:
            human["additional_kwargs"] = response_kwargs(response)
        run_input: dict[str, Any] = {"messages": [human]}
        return await self._client.runs.create(sid, self.settings.assistant_id, input=run_input, **options)

    async def _resume(
        self,
        sid: str,
        response: HumanInputResponse,
        state: Mapping[str, Any],
        before: list[Any],
        options: dict[str, Any],
    ) -> Any:
        """The run resuming the interrupt ``response`` answers (or the request it asks again);
        None when it does not answer one the server still has pending."""
        parsed = parse_request_id(response.request_id)
        if parsed is None:
            return None
        kind, interrupt_id = parsed
        pending = {
            i.get("id"): i.get("value") for i in state.get("interrupts") or [] if isinstance(i, Mapping)
        }
        if interrupt_id not in pending:
            log.warning(
                "the answer is for interrupt %s, which the server no longer has pending", interrupt_id
            )
            return None
        value = resume_value(kind, interrupt_id, pending[interrupt_id], response, thread_locale(before))
        if isinstance(value, AskAgain):
            return TurnOutput(request=value.request, fallback_text=render_text_fallback(value.request))
        return await self._client.runs.create(
            sid, self.settings.assistant_id, command={"resume": {interrupt_id: value}}, **options
        )

    async def _follow(self, sid: str, run: Mapping[str, Any], on_event: EventSink | None = None) -> None:
        """Follow the run's stream to its end, handing its text and steps to ``on_event``.

        A joined stream starts from the run's first event (``last_event_id="-1"``): a live
        message continued after a hand-over is rebuilt whole.
        """
        started = time.perf_counter()
        async for part in self._client.runs.join_stream(sid, run["run_id"], last_event_id="-1"):
            if part.event == "error":
                log.warning("run %s streamed an error: %s", run["run_id"], part.data)
            elif on_event is not None:
                for event in events_of(part.event, part.data):
                    try:
                        await on_event(event)
                    except Exception:
                        log.warning("a run event could not be shown", exc_info=True)
        metrics.AGENT_SERVER_RUN_SECONDS.observe(time.perf_counter() - started)

    async def _output(self, sid: str, run: Mapping[str, Any]) -> TurnOutput:
        finished = await self._client.runs.get(sid, run["run_id"])
        status = finished.get("status")
        if status not in ("success", "interrupted"):
            metrics.AGENT_SERVER_ERRORS.labels(kind="run_" + str(status)).inc()
            raise RunFailed(
                f"run {run['run_id']} on the LangGraph server ended as {status!r}", run_id=run["run_id"]
            )
        state = await self._client.threads.get_state(sid)
        messages = messages_of(dict(state).get("values"))
        meta = finished.get("metadata") or {}
        if meta.get(HUMAN_KEY):
            output = turn_output(messages, meta[HUMAN_KEY])
        else:
            output = turn_output(messages, None, start=int(meta.get(START_KEY) or 0))
        interrupts = [i for i in state.get("interrupts") or [] if isinstance(i, Mapping)]
        if interrupts and output.request is None:
            first = interrupts[0]
            request = request_for(str(first.get("id")), first.get("value"), thread_locale(messages))
            output = TurnOutput(
                replies=output.replies, request=request, fallback_text=render_text_fallback(request)
            )
        return replace(output, run_id=str(run["run_id"]))  # the server traces runs under their ids
