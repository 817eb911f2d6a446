"""One agent run of a job, inside its run slot: progress shown, the agent called, what it said
recorded in the turn (replies, files, a clarification asked, or a short error). Nothing is sent
from here but progress and notices: the turn's items are delivered once recorded (``delivery``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clarigate.agent.harness import ImageInput, TurnOutput
from clarigate.agent.protocol import HumanInputResponse
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import (
    ClarificationOut,
    Conversation,
    ErrorReply,
    LiveEnd,
    MessageRef,
    Sender,
    TextReply,
)
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.flow.delivery import Superseded
from clarigate.gateway.flow.feedback import FeedbackTarget, ask_feedback
from clarigate.gateway.flow.files_out import file_items
from clarigate.gateway.flow.live import LiveReply, LiveResult, finish_items, live_key
from clarigate.gateway.flow.model_failures import failure_notice
from clarigate.gateway.flow.notices import locale_for, notice_for_text
from clarigate.gateway.flow.one_question import CloseQuestion, OneQuestion
from clarigate.gateway.flow.outage import MAX_UNAVAILABLE_DELIVERIES, KeptNotice, through_outage
from clarigate.gateway.flow.progress import WorkingIndicator, clear_cancelled, note_away, working_after
from clarigate.gateway.flow.speaker import run_metadata, speaker_for
from clarigate.gateway.flow.stops import RunStopped, said_stopped, stops_of
from clarigate.gateway.jobs.handle import HandBack, JobHandle
from clarigate.gateway.runners.base import AgentRunner, AgentUnavailable, RunInput
from clarigate.gateway.runtime import metrics, routes
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Job, PendingRecord, SavedState, Store

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


@dataclass
class _Progress:
    """What shows the run is under way: its live message, or else a "working…" indicator."""

    live: LiveReply | None
    working: WorkingIndicator | None


async def ensure_held(handle: JobHandle) -> None:
    """Raise ``Superseded`` if another worker took the job over (checked before each send)."""
    if not await handle.still_held():
        raise Superseded(handle.job.inbound_id)


class AgentRun:
    """Runs the agent for a turn and adds what it said to the turn's items."""

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
            run = self._input(conv, thread_id, text, response, sender, turn, images, progress.live)
            call = lambda: self._call_agent(run, kept)  # noqa: E731
            output, usage = await self.stops.during(conv.thread_key, sender, turn.job, call)
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

    async def _show_progress(self, conv: Conversation, locale: Locale, job: Job, sender: Sender) -> _Progress:
        """Start the run's live message, or else its "working…" indicator (``working_after``)."""
        after = await working_after(self.store, job, self.config.progress_after_seconds)
        live = await self._live_reply(conv, locale, job, sender, after)
        if live is not None:
            await live.start()
            return _Progress(live, None)
        working = WorkingIndicator(self.outbox, conv, locale, after=after)
        await working.start()
        return _Progress(None, working)

    def _input(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: Turn,
        images: list[ImageInput] | None,
        live: LiveReply | None,
    ) -> RunInput:
        """What the runner is given for this run."""
        return RunInput(
            thread_id,
            text,
            response,
            images=tuple(images or ()),
            attached=turn.attached,
            # the job's inbound id names the turn: a run handed back midway resumes from its
            # last checkpoint, and a finished one gives its output again without running
            metadata=run_metadata(conv, turn.job),
            on_event=live.on_event if live is not None else None,
            # who is talking and where (``clarigate.agent.who``)
            speaker=speaker_for(self.config, conv, sender, locale=turn.language, may_answer=turn.may_answer),
        )

    async def _call_agent(self, run: RunInput, kept: KeptNotice) -> tuple[TurnOutput, RunUsage]:
        """The agent's output and the model usage it took, within ``run_timeout_seconds`` (past
        it, the runner stops what still runs of it: ``abandon``); an agent unavailable is tried
        again for a few seconds before ``AgentUnavailable`` is raised (``flow.outage``: the turn
        resumes from its last checkpoint each time)."""
        from clarigate.gateway.runners.usage import run_usage  # loaded at start where runs are

        try:
            async with asyncio.timeout(self.config.run_timeout_seconds):
                with run_usage(self.config.agent.model) as usage:
                    output = await through_outage(lambda: self.runner.run_turn(run), kept)
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
        progress: _Progress,
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
        progress: _Progress,
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

    # --- the live message of a run (gateway/flow/live.py) ------------------------------------

    async def _live_reply(
        self, conv: Conversation, locale: Locale, job: Job, sender: Sender, after: float
    ) -> LiveReply | None:
        """The run's live message where the platform shows one and streaming is on, else None.

        A job delivered before (a crash, a hand-over) continues the live message its earlier
        attempt started, so that message is finished rather than left half-written.
        """
        if not self.config.streams_on(conv.platform):
            return None
        try:
            adapter = self.outbox.adapter_for(conv.platform)
        except LookupError:
            return None
        mode = adapter.live_mode(conv)
        if mode is None:
            return None
        key = live_key(job.inbound_id)
        adopted = None
        if job.deliveries > 1:
            with contextlib.suppress(Exception):  # unreadable: a new live message instead
                found = await self.store.get_json(key)
                adopted = MessageRef.model_validate(found) if found else None
        keep_for = int(self.config.run_timeout_seconds * 2 + 3600)

        async def remember(ref: MessageRef) -> None:
            await self.store.set_json(key, ref.model_dump(mode="json"), keep_for)

        return LiveReply(
            adapter,
            conv,
            locale,
            mode=mode,
            working_after=after,
            remember=remember,
            adopted=adopted,
            recipient=sender,
            on_stopped=lambda: self.stops.stop_own(conv.thread_key, sender),  # Slack's Stop
        )

    async def end_left_live(self, conv: Conversation, job: Job) -> None:
        """Close the live message an earlier attempt of a job given up left (nothing half-written
        stays behind a job that never replies)."""
        with contextlib.suppress(Exception):
            found = await self.store.get_json(live_key(job.inbound_id))
            if found:
                await self.drop_live(conv, LiveResult(MessageRef.model_validate(found), "", False), job)

    async def drop_live(self, conv: Conversation, result: LiveResult, job: Job) -> None:
        """Close a live message whose run is put off (the agent is away): no stale progress stays."""
        if result.ref is None:
            return
        await self.outbox.send_quietly(conv, LiveEnd(ref=result.ref))
        with contextlib.suppress(Exception):
            await self.store.delete(live_key(job.inbound_id))

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
        await note_away(self.store, job, self.config.stale_claim_seconds)  # its next try: no "Working…"
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
