"""One agent run of a job, inside its run slot: progress shown, the agent called, what it said
recorded in the turn (replies, files, a clarification asked, or a short error). Nothing is sent
from here but progress and notices: the turn's items are delivered once recorded (``delivery``)."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol import HumanInputResponse
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ClarificationOut, ErrorReply, TextReply
from clarigate.gateway.flow.delivery import Superseded
from clarigate.gateway.flow.feedback import FeedbackTarget, ask_feedback
from clarigate.gateway.flow.files_out import file_items
from clarigate.gateway.flow.live import LiveReply, finish_items
from clarigate.gateway.flow.model_failures import failure_notice
from clarigate.gateway.flow.notices import locale_for, notice_for_text
from clarigate.gateway.flow.one_question import CloseQuestion, OneQuestion
from clarigate.gateway.flow.outage import MAX_UNAVAILABLE_DELIVERIES, KeptNotice, through_outage
from clarigate.gateway.flow.progress import clear_cancelled, note_away
from clarigate.gateway.flow.recalls import waiting_again
from clarigate.gateway.flow.run_progress import RunProgress, ShowsProgress
from clarigate.gateway.flow.speaker import run_metadata, speaker_for
from clarigate.gateway.flow.stops import RunStopped, said_stopped, stops_of
from clarigate.gateway.jobs.handle import HandBack, JobHandle
from clarigate.gateway.runners.base import AgentRunner, AgentUnavailable, RunInput
from clarigate.gateway.runtime import metrics, routes
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import Job, PendingRecord, SavedState

if TYPE_CHECKING:  # LangChain's callbacks: loaded where runs are (a web process only acks)
    from clarigate.gateway.runners.usage import RunUsage

log = logging.getLogger("clarigate.gateway.flow.turn")  # the turn's lines keep the name logs know


@dataclass
class Turn:
    """The job being worked on, and what it is to deliver (recorded before the first send)."""

    handle: JobHandle
    conversation: Conversation | None = None
    items: list[Any] = field(default_factory=list)
    thread_id: str | None = None  # the agent thread that ran, if one did
    hint: Locale | None = None  # the person's interface language: our words when the text shows none
    language: str | None = None  # the same as the platform gave it (``en-US``), for the agent
    may_answer: bool = True  # False while someone else's question stays open over this message
    attached: bool = False  # the answer run came with photos or files (``RunInput.attached``)
    with_record: SavedState | None = None  # saved with the delivery record (an answer's feedback target)

    @property
    def job(self) -> Job:
        """The job (the handle's)."""
        return self.handle.job

    def add(self, item: Any) -> None:
        """Add ``item`` to what this job delivers (sent once recorded)."""
        self.items.append(item)


async def ensure_held(handle: JobHandle) -> None:
    """Raise ``Superseded`` if another worker took the job over (checked before each send)."""
    if not await handle.still_held():
        raise Superseded(handle.job.inbound_id)


class AgentRun(ShowsProgress):
    """Runs the agent for a turn and adds what it said to the turn's items; what shows the run is
    under way (``_show_progress``, its live message) is ``ShowsProgress``'s (``flow/run_progress.py``)."""

    def __init__(
        self, config: GatewayConfig, store: Store, runner: AgentRunner, outbox: Outbox, close: CloseQuestion
    ) -> None:
        self.config = config
        self.stops = stops_of(store)  # the runs ``/cancel`` may stop (``flow.stops``)
        self.store = store
        self.runner = runner
        self.outbox = outbox
        self.questions = OneQuestion(store, outbox, close, config.delivery_budget_seconds)

    async def run(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: Turn,
        images: list[ImageInput] | None = None,
    ) -> TurnOutput | None:
        """Run the agent in the job's run slot: its output, None if it failed (HandBack: kept for later)."""
        async with turn.handle.run_slot():
            return await self._run_in_slot(conv, thread_id, text, response, sender, turn, images)

    async def _run_in_slot(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: Turn,
        images: list[ImageInput] | None,
    ) -> TurnOutput | None:
        progress = await self._show_progress(conv, locale_for(text, turn.hint), turn.job, sender)
        metrics.RUNS_STARTED.inc()
        started = time.perf_counter()
        model = routes.model_for(self.config.agent, self.config.routes, conv)
        log.info("run started (model %s)", model)
        turn.thread_id = thread_id
        first = len(turn.items)  # where this run's items begin (a live message is finished there)
        kept = KeptNotice(self.outbox, conv, text, turn.hint, turn.job)
        try:
            run = self._input(conv, thread_id, text, response, sender, turn, images, progress)
            call = lambda: self._call_agent(run, kept, progress)  # noqa: E731
            try:
                output, usage = await self.stops.during(conv.thread_key, sender, turn.job, call)
            finally:
                await progress.settle()  # a held try's progress: not started any more past the call
        except asyncio.CancelledError:
            await clear_cancelled(progress.live, progress.working)
            raise
        except RunStopped:  # /cancel (``flow.stops``): the job ends as done, said plainly
            metrics.RUNS_STOPPED.inc()
            await said_stopped(self.runner, run, turn, progress.live, progress.working, first)
            return None
        except AgentUnavailable:
            if progress.working is not None:
                await progress.working.finish()
            if progress.live is not None:
                await self.drop_live(conv, await progress.live.finish(), turn.job)
            await self._agent_unavailable(text, turn, kept)
            return None
        except Exception as exc:
            await self._failed(exc, conv, thread_id, text, turn, progress, first)
            return None
        _log_finished(time.perf_counter() - started, model, usage, output, progress.live)
        await self._said(conv, thread_id, text, output, sender, turn, progress, first)
        return output

    def _input(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: Turn,
        images: list[ImageInput] | None,
        progress: RunProgress,
    ) -> RunInput:
        """What the runner is given for this run (its events: to the live message, through
        ``progress``, where a held try starts it on the first one)."""
        return RunInput(
            thread_id,
            text,
            response,
            images=tuple(images or ()),
            attached=turn.attached,
            # the job's inbound id names the turn: a run handed back midway resumes from its
            # last checkpoint, and a finished one gives its output again without running
            metadata=run_metadata(conv, turn.job),
            # a held try's too, live or not: its first event is when its progress starts
            on_event=progress.on_event if progress.live is not None or progress.held else None,
            # who is talking and where (``clarigate.agent.who``)
            speaker=speaker_for(self.config, conv, sender, locale=turn.language, may_answer=turn.may_answer),
        )

    async def _call_agent(
        self, run: RunInput, kept: KeptNotice, progress: RunProgress
    ) -> tuple[TurnOutput, RunUsage]:
        """The agent's output and the model usage it took, within ``run_timeout_seconds`` (past
        it, the runner stops what still runs of it: ``abandon``); an agent unavailable is tried
        again for a few seconds before ``AgentUnavailable`` is raised (``flow.outage``: the turn
        resumes from its last checkpoint each time; a held try's progress starts once an attempt
        reaches the agent: ``RunProgress.attempt``)."""
        from clarigate.gateway.runners.usage import run_usage  # loaded at start where runs are

        try:
            async with asyncio.timeout(self.config.run_timeout_seconds):
                with run_usage(self.config.agent.model) as usage:
                    attempt = lambda: progress.attempt(lambda: self.runner.run_turn(run))  # noqa: E731
                    output = await through_outage(attempt, kept)
        except TimeoutError:
            await self.runner.abandon(run)  # "I stopped" is true, and the next message is not behind it
            raise
        return output, usage

    async def _failed(
        self,
        exc: Exception,
        conv: Conversation,
        thread_id: str,
        text: str,
        turn: Turn,
        progress: RunProgress,
        first: int,
    ) -> None:
        """The run failed or took too long: say so, and finish its live message."""
        metrics.RUNS_FAILED.inc()
        if isinstance(exc, TimeoutError):
            limit = self.config.run_timeout_seconds
            log.error("agent run on thread %s took longer than %.0f s: stopped", thread_id, limit)
            failure = notice_for_text("run_too_long", text, turn.hint)
        else:  # a provider's refusal on one line, in words that fit it; a bug of ours with its traceback
            failure = notice_for_text(failure_notice(exc, thread_id), text, turn.hint)
        if progress.working is not None:
            await progress.working.finish()
        turn.add(ErrorReply(text=failure))
        if progress.live is not None:
            finish_items(await progress.live.finish(), turn.items, first)

    async def _said(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        output: TurnOutput,
        sender: Sender,
        turn: Turn,
        progress: RunProgress,
        first: int,
    ) -> None:
        """Add what the agent said (its replies, a question) to the turn; that it is done if nothing."""
        if progress.working is not None:
            await progress.working.finish()
        result = await progress.live.finish() if progress.live is not None else None
        for reply in output.replies:
            if reply.strip():
                turn.add(TextReply(text=reply, from_agent=not output.notice_only))
        locale = locale_for(text, turn.hint)
        for item in await file_items(self.outbox, conv, output.files, self.config.files_out, locale):
            turn.add(item)
        if output.request is not None:
            await self._ask(conv, thread_id, output, sender, turn)
        elif len(turn.items) == first and not output.dismissed:  # dismissed: ``stopped_words`` says it
            # a graph whose steps only did something, or only updated its state: done, not failed
            log.info("the agent finished without a reply")
            done = notice_for_text("run_nothing_to_report", text, turn.hint)
            turn.add(TextReply(text=done, from_agent=False))
        elif not output.notice_only:  # a final answer: 👍/👎 under it
            target = FeedbackTarget(
                inbound_id=turn.job.inbound_id,
                thread_id=thread_id,
                run_id=output.run_id,
                conversation=conv,
                locale=locale,
            )
            turn.with_record = ask_feedback(self.config, turn.items, first, target)
        if result is not None:
            finish_items(result, turn.items, first, output.shown_above)

    async def _agent_unavailable(self, text: str, turn: Turn, kept: KeptNotice) -> None:
        """The agent cannot be reached: keep the job for a later delivery (it runs once the agent is
        back) and tell the person once; after the last delivery, say it failed."""
        job = turn.job
        if job.deliveries >= MAX_UNAVAILABLE_DELIVERIES:
            log.error(
                "agent unavailable for job %s after %d deliveries: giving up", job.inbound_id, job.deliveries
            )
            turn.add(ErrorReply(text=notice_for_text("run_failed", text, turn.hint)))
            return
        log.warning(
            "agent unavailable for job %s (delivery %d): kept for later", job.inbound_id, job.deliveries
        )
        await kept.send()  # once, on the first delivery (unless told already while it waited)
        # its next try shows nothing until it reaches the agent (``RunProgress``, held)
        await note_away(self.store, job, self.config.stale_claim_seconds)
        await waiting_again(self.store, job)  # not running: its writer's /cancel may withdraw it
        raise HandBack(job.inbound_id)

    async def _ask(self, conv: Conversation, thread_id: str, output: Any, sender: Sender, turn: Turn) -> None:
        """Record the agent's question as the thread's open one (the one it replaces closes:
        ``OneQuestion``) and add it to what the turn delivers."""
        request = output.request
        set_log_context(request_id=request.request_id)
        await ensure_held(turn.handle)  # before the record: a superseded run must not ask
        now = time.time()
        record = PendingRecord(
            request=request,
            token=new_token(),
            thread_id=thread_id,
            conversation=conv,
            asked_by=sender,
            policy=self.config.answer_policy,
            created_at=now,
            expires_at=now + self.config.pending_ttl_seconds,
        )
        await self.questions.save(record, sender, turn.handle)  # through a store outage
        metrics.ASKED.inc()
        fallback = output.fallback_text or request.question
        turn.add(ClarificationOut(request=request, fallback_text=fallback, token=record.token))
        log.info("asked for clarification")


def _log_finished(
    took: float, model: str, usage: RunUsage, output: TurnOutput, live: LiveReply | None
) -> None:
    """The run's metrics and its one INFO line (time, model calls, tokens)."""
    metrics.RUN_LATENCY.observe(took)
    metrics.RUNS_FINISHED.inc()
    log.info(
        "run finished in %.2f s (model %s, %d model call(s), %d tokens in, %d out)%s%s",
        took,
        usage.model or model,
        usage.calls,
        usage.input_tokens,
        usage.output_tokens,
        ", asking" if output.request is not None else "",
        f", {live.calls} live update(s)" if live is not None and live.calls else "",
    )


def new_token() -> str:
    """A short url-safe token for button payloads (16 characters, 96 random bits)."""
    return secrets.token_urlsafe(12)
