"""What one job does: map the chat thread, match typed replies, run the agent, send the results.

Every accepted message gets exactly one reply: the agent's, a short error, or
(for ``/new`` and partial form answers) a short note. The job is completed (and
the thread's turnstile advanced) only after that reply went out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agent.harness import ImageInput
from agent.protocol import HumanInputResponse, detect_locale, looks_like_answer, parse_typed_reply
from gateway import metrics
from gateway.answers import answered_by, answered_line, policy_refusal, run_text_for, view_of
from gateway.commands import Control, parse_command
from gateway.config import GatewayConfig
from gateway.llm_usage import run_usage
from gateway.logs import set_log_context
from gateway.messages import (
    AnswerJob,
    ClarificationClosed,
    ClarificationOut,
    Conversation,
    ErrorReply,
    InboundMessage,
    MessageJob,
    Sender,
    TextReply,
)
from gateway.notices import notice_for_text
from gateway.outbound import Outbox
from gateway.port import DeliveryFailed
from gateway.progress import WorkingIndicator
from gateway.runner import AgentRunner, AgentUnavailable
from gateway.store.base import Job, PendingRecord, Store

log = logging.getLogger(__name__)

#: How long a cancelled run may take to clear its "working…" message (shutdown waits for it).
CLEAR_PROGRESS_SECONDS = 2.0
#: Deliveries of a job that failed before any reply; after the last one it is given up.
MAX_DELIVERIES = 3
#: Images of one message shown to the model at most.
MAX_IMAGES = 4
#: Deliveries of a job whose agent was unavailable (a LangGraph server down): one stale-claim
#: period apart, so the default keeps a message for about an hour before giving up.
MAX_UNAVAILABLE_DELIVERIES = 120


class HandBack(Exception):
    """The job failed before any reply; leave it in the stream to be retried."""


class Superseded(Exception):
    """Another worker took the job over (this one stalled): it replies, this one stays silent."""


@dataclass
class ReadAhead:
    """Set by the worker pool around a job: completing it may read the next jobs in the same step.

    ``count()`` says how many to read when the job completes (0: none); ``take`` gets them.
    """

    consumer: str
    count: Callable[[], int]
    take: Callable[[list[Job]], None]


#: The worker pool's ``ReadAhead`` for the job the current task runs (None: just complete it).
READ_AHEAD: ContextVar[ReadAhead | None] = ContextVar("clarigate_read_ahead", default=None)


async def _always_held(job: Job) -> bool:
    return True


@dataclass
class _Progress:
    """The job being worked on, and whether its reply went out (then it must not be retried)."""

    job: Job
    replied: bool = False


class Dispatcher:
    """Runs jobs read from the stream (the worker pool has already waited for the turnstile)."""

    def __init__(
        self,
        config: GatewayConfig,
        store: Store,
        runner: AgentRunner,
        outbox: Outbox,
        on_done: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        self.outbox = outbox
        self.on_done = on_done  # told each inbound id completed here
        # asked before the first reply whether this replica still holds the job (the worker pool's)
        self.is_held: Callable[[Job], Awaitable[bool]] = _always_held
        self.control = Control(config, store, outbox)  # conversation control (gateway/commands.py)

    async def handle(self, job: Job) -> None:
        """Process one job to completion; raises ``HandBack`` when it should be retried later."""
        # A first delivery cannot be done yet (the dedupe key admits each inbound id once): save the trip.
        if job.deliveries > 1 and await self.store.is_done(job.inbound_id):
            await self._complete(job)
            return
        progress = _Progress(job)
        set_log_context(inbound_id=job.inbound_id)
        try:
            if job.kind in ("message", "command"):
                await self._message(MessageJob.model_validate_json(job.payload_json).message, progress)
            else:
                await self._answer(AnswerJob.model_validate_json(job.payload_json), progress)
        except HandBack:
            raise
        except Superseded:
            # not completed here either: the worker holding it now completes it (once)
            log.warning("job %s was taken over by another worker: its reply comes from there", job.inbound_id)
            return
        except Exception as exc:
            if isinstance(exc, DeliveryFailed) and (progress.replied or job.deliveries >= MAX_DELIVERIES):
                metrics.DELIVERIES_GIVEN_UP.labels(platform=job.inbound_id.partition(":")[0]).inc()
            if progress.replied:
                log.exception("job %s failed after its reply was sent", job.inbound_id)
            elif job.deliveries < MAX_DELIVERIES:
                log.exception(
                    "job %s failed before any reply (delivery %d): retrying", job.inbound_id, job.deliveries
                )
                raise HandBack(job.inbound_id) from None
            else:
                metrics.JOBS_GIVEN_UP.inc()
                log.exception("job %s failed %d times: giving up", job.inbound_id, job.deliveries)
                if job.kind != "answer":
                    await self.store.forget(job.inbound_id)  # a redelivery by the platform may retry
        await self._complete(job)

    async def _complete(self, job: Job) -> None:
        """Record the job done; retried through a store blip, since its reply has gone out.

        A job left uncompleted would be claimed and answered again by another worker.
        """
        delay, waited = 0.05, 0.0
        ahead = READ_AHEAD.get()
        while True:
            try:
                count = ahead.count() if ahead is not None else 0
                if ahead is not None and count > 0:
                    ttl = self.config.thread_ttl_seconds
                    ahead.take(await self.store.complete_and_read(job, ahead.consumer, count, ttl))
                else:
                    await self.store.complete_job(job)
                break
            except Exception:
                if waited >= self.config.stale_claim_seconds:
                    raise
                log.warning("completing job %s failed: retrying in %.2f s", job.inbound_id, delay)
                await asyncio.sleep(delay)
                waited += delay
                delay = min(delay * 2, 1.0)
        if self.on_done is not None:
            self.on_done(job.inbound_id)

    # --- the two kinds of job --------------------------------------------------------------

    async def _message(self, msg: InboundMessage, progress: _Progress) -> None:
        lookup = progress.job.thread_lookup
        conv = msg.conversation
        set_log_context(platform=conv.platform, chat=conv.chat_id)
        ttl = self.config.thread_ttl_seconds
        command = parse_command(msg.text)
        if command is not None:  # /new in turn; the others out of turn (``kind == "command"``)

            async def reply(item: Any) -> Any:
                return await self._reply(conv, item, progress)

            await self.control.handle(command, msg, reply, lookup)
            return
        if lookup is None:
            lookup = await self.store.thread_with_pending(conv.thread_key, ttl)
        thread_id, pending = lookup
        set_log_context(thread_id=thread_id)
        if (
            pending is not None
            and self._may_type_answer(pending, msg)
            and not looks_like_answer(pending.request, msg.text)
            and not await self.control.expects_typed_answer(pending, msg.sender)
        ):
            # Not an answer to this choice or form (and the person did not choose "Other…" or
            # "Fill in"): a new request. It closes the question (as superseded, for everyone)
            # and runs as a request, never as the question's answer.
            await self.control.close_question(pending, msg.sender, "superseded")
        elif pending is not None and self._may_type_answer(pending, msg):
            set_log_context(request_id=pending.request_id)
            by = answered_by(conv.platform, msg.sender)
            typed = parse_typed_reply(pending.request, msg.text, by)
            if typed.response is None and typed.problems:
                await self._reply(conv, TextReply(text="\n".join(typed.problems)), progress)
                return
            if typed.response is not None:
                claim = await self.store.claim_answer(pending.request_id, msg.sender, typed.response)
                if claim.status == "claimed" and claim.record is not None:
                    metrics.ANSWERED.inc()
                    view = view_of(claim.record)
                    closed = ClarificationClosed(view=view, answered_line=answered_line(view))
                    await self.outbox.send_quietly(conv, closed)
                    text = run_text_for(pending, typed.response)
                    await self._run(conv, thread_id, text, typed.response, msg.sender, progress)
                    return
        elif pending is not None and self._is_open_for(pending, msg):
            # The thread waits for someone else's answer: running this message would let the agent
            # take it as that answer, so say who is asked instead.
            refusal = policy_refusal(pending, view_of(pending), msg.sender)
            if refusal is not None:
                # meant for that person only: not a public line on every message they write
                refused = TextReply(text=refusal.message, private_to=msg.sender)
                await self._reply(conv, refused, progress)
                return
        images = await self._images(msg)
        await self._run(conv, thread_id, message_text(msg), None, msg.sender, progress, images)

    async def _images(self, msg: InboundMessage) -> list[ImageInput]:
        """The message's images, fetched through its adapter within the size cap (others are
        described in the text); one that cannot be had is left out, with a log line."""
        cap = self.config.agent.max_image_bytes
        wanted = [a for a in msg.attachments if a.kind == "image" and (a.size or 0) <= cap][:MAX_IMAGES]
        if not wanted or cap <= 0:
            return []
        images = []
        for attachment in wanted:
            try:
                adapter = self.outbox.adapter_for(msg.conversation.platform)
                data = await adapter.fetch_attachment(attachment, cap)
            except Exception:
                log.warning("could not fetch image %s", attachment.name or attachment.kind, exc_info=True)
                continue
            if data:
                images.append(ImageInput(data, attachment.mime_type or "image/png", attachment.name))
        return images

    async def _answer(self, job: AnswerJob, progress: _Progress) -> None:
        conv = job.conversation
        set_log_context(platform=conv.platform, chat=conv.chat_id, thread_id=job.thread_id)
        set_log_context(request_id=job.request_id)
        if not await self.control.is_current(conv, job.thread_id):
            # claimed just before /new: the old thread's answer is not run into the new conversation
            text = notice_for_text("answer_after_restart", job.text)
            await self._reply(conv, TextReply(text=text), progress)
            return
        await self._run(conv, job.thread_id, job.text, job.response, job.sender, progress)

    # --- one agent run -----------------------------------------------------------------------

    async def _run(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        progress: _Progress,
        images: list[ImageInput] | None = None,
    ) -> None:
        working = WorkingIndicator(
            self.outbox, conv, detect_locale(text), after=self.config.progress_after_seconds
        )
        await working.start()
        metrics.RUNS_STARTED.inc()
        started = time.perf_counter()
        limit = self.config.run_timeout_seconds
        model = self.config.agent.model
        log.info("run started (model %s)", model)
        try:
            async with asyncio.timeout(limit):
                seen = {"images": images} if images else {}  # runners without images keep working
                with run_usage(model) as usage:
                    output = await self.runner.run_turn(
                        thread_id, text, response, metadata=run_metadata(conv, progress.job), **seen
                    )
        except asyncio.CancelledError:
            # stopping, or taken over: the job runs again elsewhere with its own "working…"
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(working.finish(), CLEAR_PROGRESS_SECONDS)
            raise
        except AgentUnavailable:
            await working.finish()
            await self._agent_unavailable(conv, text, progress)
            return
        except Exception as exc:
            metrics.RUNS_FAILED.inc()
            if isinstance(exc, TimeoutError):
                log.error("agent run on thread %s took longer than %.0f s: stopped", thread_id, limit)
                failure = notice_for_text("run_too_long", text)
            else:
                run_id = getattr(exc, "run_id", None)
                log.exception(
                    "agent run failed on thread %s%s", thread_id, f" (run {run_id})" if run_id else ""
                )
                failure = notice_for_text("run_failed", text)
            await working.finish()
            await self._reply(conv, ErrorReply(text=failure), progress)
            return
        took = time.perf_counter() - started
        metrics.RUN_LATENCY.observe(took)
        metrics.RUNS_FINISHED.inc()
        log.info(
            "run finished in %.2f s (model %s, %d model call(s), %d tokens in, %d out)%s",
            took,
            usage.model or model,
            usage.calls,
            usage.input_tokens,
            usage.output_tokens,
            ", asking" if output.request is not None else "",
        )
        await working.finish()
        for reply in output.replies:
            if reply.strip():
                await self._reply(conv, TextReply(text=reply), progress)
        if output.request is not None:
            await self._ask(conv, thread_id, output, sender, progress)
        elif not progress.replied:
            log.warning("the agent produced no reply")
            await self._reply(conv, ErrorReply(text=notice_for_text("run_failed", text)), progress)

    async def _agent_unavailable(self, conv: Conversation, text: str, progress: _Progress) -> None:
        """The agent cannot be reached: keep the job for a later delivery (it runs once the agent is
        back) and tell the person once; after the last delivery, say it failed."""
        job = progress.job
        if job.deliveries >= MAX_UNAVAILABLE_DELIVERIES:
            log.error(
                "agent unavailable for job %s after %d deliveries: giving up", job.inbound_id, job.deliveries
            )
            await self._reply(conv, ErrorReply(text=notice_for_text("run_failed", text)), progress)
            return
        log.warning(
            "agent unavailable for job %s (delivery %d): kept for later", job.inbound_id, job.deliveries
        )
        if job.deliveries == 1:
            await self.outbox.send_quietly(conv, ErrorReply(text=notice_for_text("agent_unavailable", text)))
        raise HandBack(job.inbound_id)

    async def _ask(
        self, conv: Conversation, thread_id: str, output: Any, sender: Sender, progress: _Progress
    ) -> None:
        request = output.request
        set_log_context(request_id=request.request_id)
        await self._ensure_held(progress)  # before the record: a superseded run must not ask
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
        await self.store.save_pending(record)
        metrics.ASKED.inc()
        fallback = output.fallback_text or request.question
        out = ClarificationOut(request=request, fallback_text=fallback, token=record.token)
        ref = await self._reply(conv, out, progress)
        if ref is not None:
            await self.store.set_message_ref(request.request_id, ref)
        log.info("asked for clarification")

    async def _reply(self, conv: Conversation, item: Any, progress: _Progress) -> Any:
        await self._ensure_held(progress)
        ref = await self.outbox.send(conv, item)
        if not progress.replied:
            metrics.observe_receive_to_reply(progress.job.entry_id)
        progress.replied = True
        return ref

    async def _ensure_held(self, progress: _Progress) -> None:
        """Before the first reply: raise ``Superseded`` if another worker took the job over."""
        if not progress.replied and not await self.is_held(progress.job):
            raise Superseded(progress.job.inbound_id)

    @staticmethod
    def _is_open_for(record: PendingRecord, msg: InboundMessage) -> bool:
        """True when ``record`` is still open and was asked before ``msg`` was written."""
        return (
            record.status == "pending"
            and record.expires_at > time.time()
            and (msg.received_at >= record.created_at)
        )

    def _may_type_answer(self, record: PendingRecord, msg: InboundMessage) -> bool:
        """True when ``msg`` is a typed answer to ``record``: its author may answer, after the question.

        A message written while the agent was still thinking is more context, not an answer to a
        question the person had not seen yet.
        """
        if not self._is_open_for(record, msg):
            return False
        sender = msg.sender
        return (
            record.policy == "anyone" or record.asked_by is None or record.asked_by.user_id == sender.user_id
        )


def run_metadata(conv: Conversation, job: Job) -> dict[str, str]:
    """What a run carries besides its thread: the inbound id (a runner may join the run it started
    for it before) and where the conversation is (tracing, a server's thread metadata)."""
    meta = {"inbound_id": job.inbound_id, "platform": conv.platform, "chat_id": conv.chat_id}
    if conv.workspace:
        meta["workspace"] = conv.workspace
    if conv.topic:
        meta["topic"] = conv.topic
    return meta


def new_token() -> str:
    """A short url-safe token for button payloads (16 characters, 96 random bits)."""
    return secrets.token_urlsafe(12)


def message_text(msg: InboundMessage) -> str:
    """What the agent reads: the text, and the names of attachments it cannot see."""
    if not msg.attachments:
        return msg.text
    described = "; ".join(a.describe() for a in msg.attachments)
    return f"{msg.text}\n\n(attached: {described})".strip()
