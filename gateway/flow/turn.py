"""What one job does: map the chat thread, match typed replies, run the agent, deliver the results.

Every accepted message gets exactly one reply: the agent's, a short error, or (for ``/new``
and partial form answers) a short note. A job runs in two steps. The *run* (inside a run
slot) decides what to say and records it in the store before anything is sent; the
*delivery* (``clarigate.gateway.flow.delivery``) sends what was recorded, retrying on its own. A job that
changes hands after its outputs were recorded is only delivered, never run again. The job is
completed (and the thread's turnstile advanced) once every item was delivered or abandoned.

The worker pool hands each job in as a ``JobHandle`` (``clarigate.gateway.jobs.handle``): the
turn asks it whether the job is still held here before every send, and holds its run slot around
the agent run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clarigate.agent.harness import ImageInput
from clarigate.agent.protocol import HumanInputResponse, looks_like_answer, parse_typed_reply
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import (
    AnswerJob,
    ClarificationClosed,
    ClarificationOut,
    Conversation,
    ErrorReply,
    InboundMessage,
    LiveEnd,
    MessageJob,
    MessageRef,
    Sender,
    TextReply,
)
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.flow.answers import answered_by, answered_line, policy_refusal, run_text_for, view_of
from clarigate.gateway.flow.commands import Control, parse_command
from clarigate.gateway.flow.delivery import Deliverer, Superseded, new_plan, persist, persist_budget
from clarigate.gateway.flow.live import LiveReply, LiveResult, finish_items, live_key
from clarigate.gateway.flow.notices import language_hint, locale_for, notice_for_text
from clarigate.gateway.flow.progress import WorkingIndicator
from clarigate.gateway.jobs.handle import HandBack, JobHandle
from clarigate.gateway.runners.base import AgentRunner, AgentUnavailable, RunInput
from clarigate.gateway.runners.usage import run_usage
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Job, PendingRecord, Store
from clarigate.gateway.store.keys import DONE_TTL_SECONDS

log = logging.getLogger(__name__)

#: How long a cancelled run may take to clear its "working…" message (shutdown waits for it).
CLEAR_PROGRESS_SECONDS = 2.0
#: Deliveries of a job whose run failed before recording anything; after the last it is given up.
MAX_DELIVERIES = 3
#: Images of one message shown to the model at most.
MAX_IMAGES = 4
#: Deliveries of a job whose agent was unavailable (a LangGraph server down): one stale-claim
#: period apart, so the default keeps a message for about an hour before giving up.
MAX_UNAVAILABLE_DELIVERIES = 120


@dataclass
class _Turn:
    """The job being worked on, and what it is to deliver (recorded before the first send)."""

    handle: JobHandle
    conversation: Conversation | None = None
    items: list[Any] = field(default_factory=list)
    thread_id: str | None = None  # the agent thread that ran, if one did
    # the person's interface language (``InboundMessage.language``), for the gateway's own words
    # when the text gives no sign of one ("ok", a photo, a number)
    hint: Locale | None = None

    @property
    def job(self) -> Job:
        """The job (the handle's)."""
        return self.handle.job


class Dispatcher:
    """Runs jobs read from the stream (the worker pool has already waited for the turnstile)."""

    def __init__(
        self,
        config: GatewayConfig,
        store: Store,
        runner: AgentRunner,
        outbox: Outbox,
        control: Control,
        on_done: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.runner = runner
        self.outbox = outbox
        self.control = control  # conversation control (gateway/flow/commands.py)
        self.on_done = on_done  # told each inbound id completed here
        self.deliverer = Deliverer(config, store, outbox)

    async def handle(self, handle: JobHandle) -> None:
        """Run (unless its outputs were recorded already) and deliver one job, then complete it.

        Raises ``HandBack`` when the run failed before recording anything and should be retried.
        """
        job = handle.job
        record = None
        set_log_context(inbound_id=job.inbound_id)
        # A first delivery cannot be done or recorded yet (the dedupe key admits each inbound id
        # once): save the trips.
        if job.deliveries > 1:
            if await self.store.is_done(job.inbound_id):
                await self._complete(job)
                return
            record = await self.store.delivery_record(job.inbound_id)
            if record is not None:
                log.info("job %s resumes delivery of its recorded replies", job.inbound_id)
        try:
            if record is None:
                record = await self._run_and_record(handle)
            if record is not None:
                held = lambda: self._ensure_held(handle)  # noqa: E731
                await self.deliverer.deliver(job.inbound_id, record, held, entry_id=job.entry_id)
        except Superseded:
            # not completed here either: the worker holding it now completes it (once)
            log.warning("job %s was taken over by another worker: its reply comes from there", job.inbound_id)
            return
        await self._complete(job)

    async def _run_and_record(self, handle: JobHandle) -> Any:
        """The run step: what to say, recorded. None when the job is given up."""
        job = handle.job
        turn = _Turn(handle)
        try:
            if job.kind in ("message", "command"):
                await self._message(MessageJob.model_validate_json(job.payload_json).message, turn)
            else:
                await self._answer(AnswerJob.model_validate_json(job.payload_json), turn)
            if turn.conversation is None or not turn.items:
                return None
            plan = new_plan(job.inbound_id, turn.conversation, turn.items)
            await self._ensure_held(handle)  # a superseded run records nothing
            # a thread that ran is deleted from the checkpointer once its chat mapping has expired
            # (unused for thread_ttl_seconds) and the retention period has passed
            unused_after = self.config.thread_ttl_seconds + self.config.thread_retention_seconds
            cleanup = (turn.thread_id, plan.created_at + unused_after) if turn.thread_id else None
            return await self.store.record_delivery(
                job.inbound_id, plan.model_dump_json(), DONE_TTL_SECONDS, cleanup
            )
        except (Superseded, HandBack):
            raise
        except Exception:
            if job.deliveries < MAX_DELIVERIES:
                log.exception(
                    "job %s failed before its reply was recorded (delivery %d): retrying",
                    job.inbound_id,
                    job.deliveries,
                )
                raise HandBack(job.inbound_id) from None
            metrics.JOBS_GIVEN_UP.inc()
            log.exception("job %s failed %d times: giving up", job.inbound_id, job.deliveries)
            if turn.conversation is not None:
                await self._end_left_live(turn.conversation, job)
            if job.kind != "answer":
                await self.store.forget(job.inbound_id)  # a redelivery by the platform may retry
            return None

    async def _complete(self, job: Job) -> None:
        """Record the job done; retried through a store outage, since its reply has gone out.

        A job left uncompleted would be claimed and its last reply sent again by another worker:
        while this retries, the job stays held here and its keeper renews it once Redis is back.
        """
        await persist(
            lambda: self.store.complete_job(job),
            f"completing job {job.inbound_id}",
            persist_budget(self.config),
        )
        if self.on_done is not None:
            self.on_done(job.inbound_id)

    async def _completed(self, msg: InboundMessage) -> InboundMessage:
        """The message as its adapter completes it after the ack (names of mentioned people)."""
        try:
            return await self.outbox.adapter_for(msg.conversation.platform).complete_message(msg)
        except Exception as exc:  # noqa: BLE001 (a nicety: the ids stand in for the names)
            log.warning("completing message %s failed (%s): it goes on as it is", msg.event_id, exc)
            return msg

    # --- the two kinds of job --------------------------------------------------------------

    async def _message(self, msg: InboundMessage, turn: _Turn) -> None:
        conv = turn.conversation = msg.conversation
        turn.hint = language_hint(msg.language)
        set_log_context(platform=conv.platform, chat=conv.chat_id)
        msg = await self._completed(msg)
        ttl = self.config.thread_ttl_seconds
        command = parse_command(msg.text)
        if command is not None:  # /new in turn; the others out of turn (``kind == "command"``)

            async def reply(item: Any) -> Any:
                return await self._reply(conv, item, turn)

            await self.control.handle(command, msg, reply)
            return
        thread_id, pending = await self.store.thread_with_pending(conv.thread_key, ttl)
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
                await self._reply(conv, TextReply(text="\n".join(typed.problems)), turn)
                return
            if typed.response is not None:
                claim = await self.store.claim_answer(pending.request_id, msg.sender, typed.response)
                if claim.status == "claimed" and claim.record is not None:
                    metrics.ANSWERED.inc()
                    view = view_of(claim.record)
                    closed = ClarificationClosed(view=view, answered_line=answered_line(view))
                    await self.outbox.send_quietly(conv, closed)
                    text = run_text_for(pending, typed.response)
                    await self._run(conv, thread_id, text, typed.response, msg.sender, turn)
                    return
        elif pending is not None and self._is_open_for(pending, msg):
            # The thread waits for someone else's answer: running this message would let the agent
            # take it as that answer, so say who is asked instead.
            refusal = policy_refusal(pending, view_of(pending), msg.sender)
            if refusal is not None:
                # meant for that person only: not a public line on every message they write
                refused = TextReply(text=refusal.message, private_to=msg.sender)
                await self._reply(conv, refused, turn)
                return
        # a new request: its language is what the person's later commands (/help, /status) answer
        # in; recorded while the images are fetched (a typed answer such as "Vue" says less)
        images, _ = await asyncio.gather(self._images(msg), self.control.remember_locale(msg))
        await self._run(conv, thread_id, message_text(msg), None, msg.sender, turn, images)

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
                kind = image_type(data) or attachment.mime_type or "image/png"
                images.append(ImageInput(data, kind, attachment.name))
        return images

    async def _answer(self, job: AnswerJob, turn: _Turn) -> None:
        conv = turn.conversation = job.conversation
        set_log_context(platform=conv.platform, chat=conv.chat_id, thread_id=job.thread_id)
        set_log_context(request_id=job.request_id)
        if not await self.control.is_current(conv, job.thread_id):
            # claimed just before /new: the old thread's answer is not run into the new conversation
            text = notice_for_text("answer_after_restart", job.text)
            await self._reply(conv, TextReply(text=text), turn)
            return
        await self._run(conv, job.thread_id, job.text, job.response, job.sender, turn)

    # --- one agent run -----------------------------------------------------------------------

    async def _run(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: _Turn,
        images: list[ImageInput] | None = None,
    ) -> None:
        async with turn.handle.run_slot():
            await self._run_in_slot(conv, thread_id, text, response, sender, turn, images)

    async def _run_in_slot(
        self,
        conv: Conversation,
        thread_id: str,
        text: str,
        response: HumanInputResponse | None,
        sender: Sender,
        turn: _Turn,
        images: list[ImageInput] | None,
    ) -> None:
        locale = locale_for(text, turn.hint)
        live = await self._live_reply(conv, locale, turn.job, sender)
        working = None
        if live is not None:
            await live.start()
        else:
            working = WorkingIndicator(self.outbox, conv, locale, after=self.config.progress_after_seconds)
            await working.start()
        metrics.RUNS_STARTED.inc()
        started = time.perf_counter()
        limit = self.config.run_timeout_seconds
        model = self.config.agent.model
        log.info("run started (model %s)", model)
        turn.thread_id = thread_id
        first = len(turn.items)  # where this run's items begin (a live message is finished there)
        try:
            async with asyncio.timeout(limit):
                run = RunInput(
                    thread_id,
                    text,
                    response,
                    images=tuple(images or ()),
                    # the job's inbound id names the turn: a run handed back midway resumes from its
                    # last checkpoint, and a finished one gives its output again without running
                    metadata=run_metadata(conv, turn.job),
                    on_event=live.on_event if live is not None else None,
                )
                with run_usage(model) as usage:
                    output = await self.runner.run_turn(run)
        except asyncio.CancelledError:
            # stopping, or taken over: the job runs again elsewhere with its own "working…"; a live
            # message stays as it is, for the replica that takes the job over to finish
            with contextlib.suppress(BaseException):
                if live is not None:
                    await asyncio.wait_for(live.finish(), CLEAR_PROGRESS_SECONDS)
                if working is not None:
                    await asyncio.wait_for(working.finish(reply_follows=False), CLEAR_PROGRESS_SECONDS)
            raise
        except AgentUnavailable:
            if working is not None:
                await working.finish()
            if live is not None:
                await self._drop_live(conv, await live.finish(), turn.job)
            await self._agent_unavailable(conv, text, turn)
            return
        except Exception as exc:
            metrics.RUNS_FAILED.inc()
            if isinstance(exc, TimeoutError):
                log.error("agent run on thread %s took longer than %.0f s: stopped", thread_id, limit)
                failure = notice_for_text("run_too_long", text, turn.hint)
            else:
                run_id = getattr(exc, "run_id", None)
                log.exception(
                    "agent run failed on thread %s%s", thread_id, f" (run {run_id})" if run_id else ""
                )
                failure = notice_for_text("run_failed", text, turn.hint)
            if working is not None:
                await working.finish()
            await self._reply(conv, ErrorReply(text=failure), turn)
            if live is not None:
                finish_items(await live.finish(), turn.items, first)
            return
        took = time.perf_counter() - started
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
        if working is not None:
            await working.finish()
        result = await live.finish() if live is not None else None
        for reply in output.replies:
            if reply.strip():
                await self._reply(conv, TextReply(text=reply), turn)
        if output.request is not None:
            await self._ask(conv, thread_id, output, sender, turn)
        elif len(turn.items) == first:
            log.warning("the agent produced no reply")
            await self._reply(conv, ErrorReply(text=notice_for_text("run_failed", text, turn.hint)), turn)
        if result is not None:
            finish_items(result, turn.items, first)

    # --- the live message of a run (gateway/flow/live.py) ------------------------------------

    async def _live_reply(
        self, conv: Conversation, locale: Locale, job: Job, sender: Sender
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
            working_after=self.config.progress_after_seconds,
            remember=remember,
            adopted=adopted,
            recipient=sender,
        )

    async def _end_left_live(self, conv: Conversation, job: Job) -> None:
        """Close the live message an earlier attempt of a job given up left (nothing half-written
        stays behind a job that never replies)."""
        with contextlib.suppress(Exception):
            found = await self.store.get_json(live_key(job.inbound_id))
            if found:
                await self._drop_live(conv, LiveResult(MessageRef.model_validate(found), "", False), job)

    async def _drop_live(self, conv: Conversation, result: LiveResult, job: Job) -> None:
        """Close a live message whose run is put off (the agent is away): no stale progress stays."""
        if result.ref is None:
            return
        await self.outbox.send_quietly(conv, LiveEnd(ref=result.ref))
        with contextlib.suppress(Exception):
            await self.store.delete(live_key(job.inbound_id))

    async def _agent_unavailable(self, conv: Conversation, text: str, turn: _Turn) -> None:
        """The agent cannot be reached: keep the job for a later delivery (it runs once the agent is
        back) and tell the person once; after the last delivery, say it failed."""
        job = turn.job
        if job.deliveries >= MAX_UNAVAILABLE_DELIVERIES:
            log.error(
                "agent unavailable for job %s after %d deliveries: giving up", job.inbound_id, job.deliveries
            )
            await self._reply(conv, ErrorReply(text=notice_for_text("run_failed", text, turn.hint)), turn)
            return
        log.warning(
            "agent unavailable for job %s (delivery %d): kept for later", job.inbound_id, job.deliveries
        )
        if job.deliveries == 1:
            delayed = notice_for_text("agent_unavailable", text, turn.hint)
            await self.outbox.send_quietly(conv, ErrorReply(text=delayed))
        raise HandBack(job.inbound_id)

    async def _ask(
        self, conv: Conversation, thread_id: str, output: Any, sender: Sender, turn: _Turn
    ) -> None:
        request = output.request
        set_log_context(request_id=request.request_id)
        await self._ensure_held(turn.handle)  # before the record: a superseded run must not ask
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
        await self._reply(conv, out, turn)
        log.info("asked for clarification")

    async def _reply(self, conv: Conversation, item: Any, turn: _Turn) -> None:
        """Add ``item`` to what this job delivers (sent once recorded)."""
        turn.items.append(item)

    @staticmethod
    async def _ensure_held(handle: JobHandle) -> None:
        """Raise ``Superseded`` if another worker took the job over (checked before each send)."""
        if not await handle.still_held():
            raise Superseded(handle.job.inbound_id)

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


#: The leading bytes of the image formats models take (providers check the declared type).
_IMAGE_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_type(data: bytes) -> str | None:
    """The image's type read from its first bytes (PNG, JPEG, GIF, WebP); None when unknown.

    Platforms do not always say (Feishu's image messages carry no type), and a JPEG sent as
    ``image/png`` is refused by some providers.
    """
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return next((kind for magic, kind in _IMAGE_MAGIC if data.startswith(magic)), None)


def run_metadata(conv: Conversation, job: Job) -> dict[str, str]:
    """What a run carries besides its thread: the inbound id (it names the turn: a runner resumes
    or joins the run it started for it before) and where the conversation is (tracing, a
    server's thread metadata)."""
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
