"""The LangGraph server runner: the agent runs on a LangGraph server, the gateway is its channel layer.

Chosen by ``agent.server_url`` (``LANGGRAPH_URL``); talks to the server with the official
``langgraph-sdk`` client. Nothing above ``clarigate.gateway.runners.base.AgentRunner`` changes.

- Threads: the gateway's agent thread id (kept in the Redis thread map) names the server
  thread (as a UUID); it is created on first use with metadata (platform, chat, bot id)
  so the server's own UI and APIs can find a conversation. ``/new`` maps a chat thread to
  a new agent thread id, so to a new server thread.
- Runs: one background run per inbound message, its inbound id in its metadata: a job delivered
  again finds the run it started and joins it. The run is followed to its end (``server_runs``),
  then the thread's state gives the turn's replies, its question or an interrupt (an answer to
  one resumes the run with ``Command(resume=...)``).
- Failures: an unreachable server, a timeout or a 5xx raise ``AgentUnavailable`` (the job is
  kept); a run the server lost is joined again, gone on from the last checkpoint or started
  again (``server_runs``); a run that ends in error raises ``RunFailed`` naming its run id. One
  that reached the recursion limit, that someone cancelled on the server, or that the server's
  own timeout stopped, is told as such, and one the gateway gives up on is cancelled there
  (``server_stops``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import partial
from typing import Any
from urllib.parse import urlsplit

from clarigate.agent import placement
from clarigate.agent.breakpoints import breakpoint_of
from clarigate.agent.events import EventSink
from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.interrupts import Asked, parse_request_id
from clarigate.agent.placement import SettingsDoNotApply
from clarigate.agent.protocol import HumanInputRequest, HumanInputResponse, detect_locale
from clarigate.agent.protocol.wire import response_kwargs
from clarigate.agent.settings import AgentOptions
from clarigate.agent.who import WHO_KEY, Speaker, with_speaker
from clarigate.gateway.runners.base import AgentRunner, AgentUnavailable, RunFailed, RunInput
from clarigate.gateway.runners.server_attachments import ATTACHED_KEY, noted
from clarigate.gateway.runners.server_interrupts import RUNS_SEARCHED, resumed_run, waiting_asked
from clarigate.gateway.runners.server_runs import (
    BEFORE_KEY,
    HUMAN_KEY,
    INBOUND_KEY,
    BegunRuns,
    RunLost,
    ServerProbe,
    checkpoint_of,
    finished_run,
    follow,
    history_lost,
    left_of_turn,
    past_breakpoint,
    state_output,
)
from clarigate.gateway.runners.server_settings import (
    assistant_uuid,
    graph_schemas,
    run_settings,
    runs_shipped_graph,
    state_problem,
)
from clarigate.gateway.runners.server_stops import (
    cancel_unfinished,
    cancelled_output,
    lost_output,
    rolled_back,
)
from clarigate.gateway.runners.server_supersede import SUPERSEDED_BY_KEY, supersede_on_server
from clarigate.gateway.runners.server_wire import human_content, messages_of, status_of, unavailable
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.redaction import without_secrets

log = logging.getLogger(__name__)

#: How many runs of one turn the server may lose (a crash, a restart) before the job is handed
#: back for a later delivery.
LOST_RUNS = 4
#: How long the start waits for the server (the SDK retries a connection ~8 s): messages are kept.
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
        self._probe = ServerProbe(self.url, api_key)  # is the server there while a stream is silent
        self._begun = BegunRuns()  # the runs turns started here, for a run the server loses
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
            "agent runs on the LangGraph server at %s (assistant %s)", self.url, self.settings.assistant_id
        )

    async def check(self) -> list[str]:
        """What is wrong with the server settings (for ``doctor``): URL, key, assistant."""
        s, url = self.settings, self.url
        self._answered = False
        try:
            await self._client.http.get("/ok")
            self._answered = True
        except Exception as exc:
            if status_of(exc) in (401, 403):
                return [f"the LangGraph server at {url} refused the API key (LANGGRAPH_API_KEY)"]
            return [
                f"the LangGraph server at {url} does not answer (agent.server_url / LANGGRAPH_URL): {exc}"
            ]
        try:
            found = await assistant_uuid(self._client, s.assistant_id) is not None
        except Exception as exc:
            if status_of(exc) in (401, 403):
                return [f"the LangGraph server at {url} refused the API key (LANGGRAPH_API_KEY)"]
            return [f"could not list the assistants of {url}: {exc}"]
        if not found:
            return [
                f"the LangGraph server at {url} has no assistant or graph {s.assistant_id!r} (agent.assistant_id)"  # noqa: E501
            ]
        schemas = await graph_schemas(self._client, s.assistant_id)
        if problem := state_problem(schemas, s.assistant_id):
            return [problem]
        self.shipped = runs_shipped_graph(schemas)
        return placement.problems(s, placement.place_of(s, shipped=self.shipped))

    @property
    def ready_where(self) -> str:
        """Where ``/readyz`` looked for the server: its URL without credentials (its secret query
        parameters masked: ``?api_key=***``)."""
        parts = urlsplit(self.url)
        host = parts.netloc.rpartition("@")[2]  # user and password left out
        return without_secrets(parts._replace(netloc=host).geturl())

    async def ping(self) -> bool:
        """True when the server answers ``/ok`` (for ``/readyz``, which says when it stops)."""
        try:
            await self._client.http.get("/ok")
            return True
        except Exception as exc:
            log.debug("the LangGraph server at %s does not answer: %s", self.ready_where, exc)
            return False

    async def pending_request(self, thread_id: str) -> HumanInputRequest | None:
        """The question the server thread of ``thread_id`` waits for (``waiting_asked``), the
        request alone; None when there is none or the server has no such thread."""
        asked = await self._waiting(thread_id, above=False)
        return asked.request if asked is not None else None

    async def pending_asked(self, thread_id: str) -> Asked | None:
        """``pending_request`` as the turn asked it: with what it cannot hold in full, to show
        right above it (``Asked.in_full``), for a question shown again (``clarigate chat``)."""
        return await self._waiting(thread_id, above=True)

    async def _waiting(self, thread_id: str, above: bool) -> Asked | None:
        sid = server_thread_id(thread_id)
        try:
            state = await self._client.threads.get_state(sid)
        except Exception as exc:
            if status_of(exc) == 404:
                return None
            raise
        return await waiting_asked(self._client, self.settings.assistant_id, sid, state, above=above)

    async def abandon(self, run: RunInput, stopped: bool = False) -> None:
        """The gateway gave up on ``run`` (its time ran out; ``stopped``: the person stopped it): the
        runs its turn made that still go on (its own, those superseding an interrupt for it) are
        cancelled on the server."""
        inbound_id = run.inbound_id
        if inbound_id:
            mine = lambda meta: inbound_id in (meta.get(INBOUND_KEY), meta.get(SUPERSEDED_BY_KEY))  # noqa: E731
            await cancel_unfinished(self._client, server_thread_id(run.thread_id), mine, stopped)

    async def aclose(self) -> None:
        """Close the HTTP clients."""
        await self._client.http.client.aclose()
        await self._probe.aclose()

    # --- one turn --------------------------------------------------------------------------

    async def run_turn(self, run: RunInput) -> TurnOutput:
        """One run on the server thread mapped to ``run.thread_id`` (joined when it was started
        before); its streamed text and steps go to ``run.on_event`` as the server sends them."""
        # the speaker goes in each run's config; whether files came, to the answer's resume
        meta = {**run.metadata, **with_speaker(run.speaker), ATTACHED_KEY: run.attached}
        sid = server_thread_id(run.thread_id)
        try:
            return await self._turn(sid, run.text, run.response, run.images, meta, run.on_event)
        except (AgentUnavailable, RunFailed):
            raise
        except Exception as exc:
            if unavailable(exc):
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
        inbound_id, locale = meta.get("inbound_id"), detect_locale(text)
        for _ in range(LOST_RUNS):
            run = await self._started_run(sid, inbound_id, meta)
            if run is None:
                started = await self._begin(sid, text, response, images, meta)
                if isinstance(started, TurnOutput):
                    return started  # answered without a run (Edit: the arguments form), or already
                run = started
            else:
                log.info("joining run %s started for %s before", run["run_id"], inbound_id)
            try:
                streamed_error = await follow(self._client, sid, run, on_event, self._probe.alive)
                finished = await finished_run(self._client, sid, run, locale, streamed_error)
                if isinstance(finished, TurnOutput):
                    return finished  # it did not end as planned: asked again, a limit, cancelled
            except RunLost as lost:
                if await rolled_back(self._client, sid, run):  # cancelled on purpose: not started again
                    log.warning("run %s was cancelled with rollback on the LangGraph server", run["run_id"])
                    return cancelled_output(locale)
                log.warning("%s: looking at the thread again (the server restarted?)", lost)
                continue
            state = await self._client.threads.get_state(sid)
            output = await state_output(self._client, sid, state, finished.get("metadata") or {})
            output = noted(output, finished.get("metadata"))  # photos that did not go with an answer
            return replace(output, run_id=str(run["run_id"]))  # the server traces runs under their ids
        raise AgentUnavailable(f"the LangGraph server at {self.ready_where} lost {LOST_RUNS} runs of a turn")

    async def _begin(
        self,
        sid: str,
        text: str,
        response: HumanInputResponse | None,
        images: Sequence[ImageInput],
        meta: dict[str, Any],
    ) -> Any:
        """The run of a turn that has none on the server (or its output, when it needs no run)."""
        inbound_id = meta.get("inbound_id")
        state = await self._client.threads.get_state(sid)
        parsed = parse_request_id(response.request_id) if response is not None else None
        run_of = self._begun.run_of(inbound_id, human_message_id(inbound_id) if parsed is None else None)
        if response is not None and history_lost(state, run_of):  # nothing left that the answer goes on
            log.warning("server thread %s lost its history (the server restarted without it)", sid)
            return lost_output(detect_locale(text))
        assistant = self.settings.assistant_id
        options_for = partial(self._options, speaker=meta.get(WHO_KEY))
        started = await left_of_turn(
            self._client, assistant, sid, state, run_of, parsed[1] if parsed else None, options_for
        )
        if started is None and response is not None and (at := breakpoint_of(response.request_id)):
            run_meta = {**self._thread_metadata(meta), **({INBOUND_KEY: inbound_id} if inbound_id else {})}
            options = options_for(run_meta)
            started = await past_breakpoint(
                self._client, self.settings.assistant_id, sid, state, at, response, options
            )
        if started is None:
            before = messages_of(state.get("values"))
            started = await self._start(sid, text, response, images, meta, state, before)
        self._begun.remember(inbound_id, started)
        return started

    async def _started_run(self, sid: str, inbound_id: str | None, meta: Mapping[str, Any]) -> Any | None:
        """The run this inbound id started on the thread, if any; makes the thread on first use."""
        try:
            runs = await self._client.runs.list(sid, limit=RUNS_SEARCHED)
        except Exception as exc:
            if status_of(exc) != 404:
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
            BEFORE_KEY: checkpoint_of(state),
            **({INBOUND_KEY: meta["inbound_id"]} if meta.get("inbound_id") else {}),
        }
        settings = run_settings(self.settings, self.shipped, meta.get(WHO_KEY))
        options = self._options(run_meta, meta.get(WHO_KEY))
        assistant = self.settings.assistant_id
        sent = (text, images) if meta.get(ATTACHED_KEY) or images else None  # with the resume
        if response is not None and (
            resumed := await resumed_run(self._client, assistant, sid, response, state, options, sent)
        ):
            return resumed
        # a new message over open interrupts: resumed as superseded first (``server_supersede``)
        locale = detect_locale(text)
        superseded = await supersede_on_server(
            self._client, sid, assistant, state, before, run_meta, settings, locale
        )
        if isinstance(superseded, TurnOutput):
            return superseded  # a superseding run was stopped on the server: the message is not run
        state, before = superseded
        human_id = human_message_id(meta.get("inbound_id"))
        run_meta.update({HUMAN_KEY: human_id, BEFORE_KEY: checkpoint_of(state)})  # after superseding
        human: dict[str, Any] = {"type": "human", "id": human_id, "content": human_content(text, images)}
        if response is not None:
            human["additional_kwargs"] = response_kwargs(response)
        run_input: dict[str, Any] = {"messages": [human]}
        return await self._client.runs.create(sid, self.settings.assistant_id, input=run_input, **options)

    def _options(self, run_meta: dict[str, Any], speaker: Speaker | None = None) -> dict[str, Any]:
        """How the gateway's runs are made: ``run_meta`` on them, queued behind the thread's
        runs, their stream kept for a reconnect, and the agent's settings and ``speaker``."""
        return {
            "metadata": run_meta,
            "multitask_strategy": "enqueue",
            # what each step changed, the model's tokens as written and the graph's own progress
            # lines; the state is read at the end
            "stream_mode": ["updates", "messages-tuple", "custom"],
            "stream_resumable": True,
            **run_settings(self.settings, self.shipped, speaker),
        }
