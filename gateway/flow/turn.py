"""What one job does: map the chat thread, match typed replies, run the agent, deliver the results.

Every accepted message gets exactly one reply: the agent's, a short error, or (for ``/new``
and partial form answers) a short note. A job runs in two steps. The *run* (inside a run
slot) decides what to say and records it in the store before anything is sent; the
*delivery* (``clarigate.gateway.flow.delivery``) sends what was recorded, retrying on its own. A job that
changes hands after its outputs were recorded is only delivered, never run again. The job is
completed (and the thread's turnstile advanced) once every item was delivered or abandoned.

The steps of a job (run and record, deliver, complete) are ``clarigate.gateway.flow.job_steps``.
The agent run itself (progress, the call, what it said) is ``clarigate.gateway.flow.agent_run``;
what a message's attachments give the agent is ``clarigate.gateway.flow.attachments``.

The worker pool hands each job in as a ``JobHandle`` (``clarigate.gateway.jobs.handle``): the
turn asks it whether the job is still held here before every send, and holds its run slot around
the agent run.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from clarigate.agent.harness import ImageInput
from clarigate.agent.interrupts import parse_request_id
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import AnswerJob, Conversation, InboundMessage, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ClarificationClosed, TextReply
from clarigate.gateway.flow.agent_run import AgentRun, Turn
from clarigate.gateway.flow.answers import (
    answered_line,
    asked_of_someone_else,
    from_someone_else,
    may_type_answer,
    view_of,
)
from clarigate.gateway.flow.attachments import fetch_images, message_text, nothing_to_read
from clarigate.gateway.flow.closing import after_reply, stopped_words
from clarigate.gateway.flow.commands import Command, Control, parse_command, quote
from clarigate.gateway.flow.delivery import Deliverer
from clarigate.gateway.flow.job_steps import JobSteps
from clarigate.gateway.flow.notices import language_hint, locale_for, notice, notice_for_text
from clarigate.gateway.flow.one_question import close_crossed_interrupt
from clarigate.gateway.flow.typed import TypedAnswers
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

log = logging.getLogger(__name__)


class Dispatcher(JobSteps):
    """Runs jobs read from the stream (the worker pool has already waited for the turnstile).

    A job's steps (``handle``: run and record, deliver, complete) are ``JobSteps``'s
    (``flow/job_steps.py``); what a run does with a message or an answer is here.
    """

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
        self.agent_run = AgentRun(config, store, runner, outbox, control.close_question)
        self.typed = TypedAnswers(config, store, outbox, control, self.agent_run)

    async def _completed(self, msg: InboundMessage) -> InboundMessage | None:
        """The message as its adapter completes it after the ack (names of mentioned people); None
        when another message took it in (``PlatformAdapter.complete_message``)."""
        try:
            completed = await self.outbox.adapter_for(msg.conversation.platform).complete_message(msg)
        except Exception as exc:  # noqa: BLE001 (a nicety: the ids stand in for the names)
            log.warning("completing message %s failed (%s): it goes on as it is", msg.event_id, exc)
            return msg
        if completed is None:
            log.info("message %s was taken into another message (an album): no run", msg.event_id)
        return completed

    async def _named(self, job: AnswerJob) -> Sender:
        """An answer's sender as its adapter names them after the ack (a click or a form carries
        their id), as a message's sender is named (``_completed``): the agent's speaker."""
        try:
            return await self.outbox.adapter_for(job.conversation.platform).complete_sender(job.sender)
        except Exception as exc:  # noqa: BLE001 (a nicety: the id stands in for the name)
            log.warning("naming the sender of answer %s failed (%s): the id stands", job.request_id, exc)
            return job.sender

    async def _in_known_thread(self, msg: InboundMessage) -> bool:
        """Whether the bot takes part in the thread of a message kept before that could be looked
        up (``InboundMessage.only_in_known_thread``): an agent thread, else the adapter's record."""
        conv = msg.conversation
        if await self.store.has_thread(conv.thread_key):
            return True
        if await self.outbox.adapter_for(conv.platform).known_thread(msg):
            return True
        log.info("message %s is not in a thread the bot takes part in: dropped", msg.event_id)
        return False

    # --- the two kinds of job --------------------------------------------------------------

    async def _message(self, msg: InboundMessage, turn: Turn) -> None:
        """A message job: a command, a typed answer to the thread's question, or a new request."""
        conv = turn.conversation = msg.conversation
        turn.hint, turn.language = language_hint(msg.language), msg.language
        set_log_context(platform=conv.platform, chat=conv.chat_id)
        if msg.only_in_known_thread and not await self._in_known_thread(msg):
            return  # no reply: it was never the bot's
        if nothing_to_read(msg) and await self._set_aside(msg, turn):
            return  # a sticker, a place, a contact alone over the writer's open question
        if (completed := await self._completed(msg)) is None:
            return  # taken into another message (an album): that one's reply answers for both
        msg = completed
        if msg.said_to_others and not await self.typed.answers_aside(msg):
            log.info("message %s is said to the people it mentions: ignored", msg.event_id)
            return  # no reply, nothing runs, the thread's question stays open
        ttl = self.config.thread_ttl_seconds
        command = parse_command(msg.text)
        if command is not None:  # /new in turn; the others out of turn (``kind == "command"``)
            after = await self._command(command, msg, turn)
            if after is None:
                return
            msg = after
        if await self.typed.claimed_before(conv, msg, turn):
            return
        # a request's language answers the person's later /help, /status: saved by the lookup if none open
        found = await self.store.thread_lookup(conv.thread_key, ttl, self.control.locale_of(msg))
        thread_id, pending = found.thread_id, found.pending
        set_log_context(thread_id=thread_id)
        if await self.typed.settled_by_question(conv, msg, found, turn):
            return
        if msg.said_to_others:
            return  # no answer after all (someone answered first): still said to the others
        left_open = await self._left_open(pending, msg)
        # someone else's question stays open: not theirs (their own written before it was, still is)
        turn.may_answer = left_open is None or not asked_of_someone_else(left_open, msg.sender)
        hint = await self._photo_locale(msg, pending, turn)
        fetching = fetch_images(self.outbox, msg, self.config.agent.max_image_bytes, hint)
        if pending is None:
            images = await fetching
        else:  # a request over a question still there: its language recorded as the images are fetched
            images, _ = await asyncio.gather(fetching, self.control.remember_locale(msg))
        for note in images.notes:  # an image the agent cannot see: the person knows, first
            turn.add(TextReply(text=note))
        text = message_text(msg, images=images)
        if left_open is not None:
            text = from_someone_else(left_open, msg.sender, text)
        # a question the run asks replaces ``left_open``, which closes then (``OneQuestion``)
        await self.agent_run.run(conv, thread_id, text, None, msg.sender, turn, images.shown)

    async def _photo_locale(
        self, msg: InboundMessage, pending: PendingRecord | None, turn: Turn
    ) -> Locale | None:
        """The language of the notes on ``msg``'s images when its words show none (a photo alone):
        the open question's, else the person's last request's here, else their client's."""
        if pending is not None:
            return pending.request.locale
        return (None if msg.text.strip() else await self.control.written_locale(msg)) or turn.hint

    async def _command(self, command: Command, msg: InboundMessage, turn: Turn) -> InboundMessage | None:
        """Run ``command``; what then runs as a request, if anything: the words after a ``/new``, and
        the photos or files sent with it (a caption's command), start the new conversation."""

        async def reply(item: Any) -> Any:
            turn.add(item)

        await self.control.handle(command, msg, reply)
        if command.in_turn and (msg.attachments or command.words.strip()):
            return msg.model_copy(update={"text": command.words})
        return None

    async def _set_aside(self, msg: InboundMessage, turn: Turn) -> bool:
        """True when ``msg``, with nothing the agent can read (``nothing_to_read``), is set aside:
        its writer has a question open here, which such a message neither answers nor closes. The
        writer is told the question is still open (in its language); nothing runs. With no such
        question the message runs as any other, the agent told what came."""
        pending = (await self.store.chat_status(msg.conversation.thread_key)).pending
        if pending is None or not may_type_answer(pending, msg):
            return False
        log.info("message %s has nothing the agent can read: set aside, its question open", msg.event_id)
        locale = locale_for(msg.text, pending.request.locale)
        question = quote(pending.request.question)
        turn.add(TextReply(text=notice("unreadable_question_open", locale, question=question)))
        return True

    async def _left_open(self, pending: PendingRecord | None, msg: InboundMessage) -> PendingRecord | None:
        """The thread's question when it stays open while ``msg`` runs as a request, else None.

        In a shared conversation another member's request runs and the question stays open for
        its asker, whose answer still continues the thread. An approval or a graph's interrupt
        holds the agent's run instead: any request run on the thread ends it (the runner resumes
        it with a rejection), so its question closes as superseded, naming who wrote instead.
        """
        if pending is None or pending.status != "pending" or pending.expires_at <= time.time():
            return None
        if may_type_answer(pending, msg):  # answered or closed by ``TypedAnswers.settled_by_question``
            return None
        if parse_request_id(pending.request_id) is not None:
            await self.control.close_question(pending, msg.sender, "superseded")
            return None
        return pending

    async def _answer(self, job: AnswerJob, turn: Turn) -> None:
        conv = turn.conversation = job.conversation
        turn.hint = turn.language = job.locale  # a /取消's: the agent hears, and our words say, Chinese
        set_log_context(platform=conv.platform, chat=conv.chat_id, thread_id=job.thread_id)
        set_log_context(request_id=job.request_id)
        await after_reply(self.store, job.after_reply_of)  # a /cancel's reply shows first
        if job.close_message and job.request_id:
            await self._close_message(conv, job.request_id)
        if not await self.control.is_current(conv, job.thread_id):
            # claimed just before /new: the old thread's answer is not run into the new conversation
            turn.add(TextReply(text=notice_for_text("answer_after_restart", job.text)))
            return
        job = job.model_copy(update={"sender": await self._named(job)})  # as their messages name them
        await close_crossed_interrupt(self.store, self.control.close_question, job)
        text, images = await self._answer_attachments(job, turn)
        turn.attached = bool(job.attachments)
        output = await self.agent_run.run(conv, job.thread_id, text, job.response, job.sender, turn, images)
        # a dismissed question whose graph refused the declined answer: the task stopped
        if output is not None and (said := stopped_words(job.dismissed_in, output.dismissed)) is not None:
            turn.add(said)

    async def _answer_attachments(self, job: AnswerJob, turn: Turn) -> tuple[str, list[ImageInput]]:
        """What an answer's job gives the agent: its text and, for a pick sent with photos or files
        and confirmed in an "Other…" box, those as its typed answer's message would give them."""
        if not job.attachments:
            return job.text, []
        sent = InboundMessage(
            conversation=job.conversation,
            sender=job.sender,
            text=job.text,
            event_id=turn.job.inbound_id,
            attachments=job.attachments,
        )
        images = await fetch_images(self.outbox, sent, self.config.agent.max_image_bytes, turn.hint)
        for note in images.notes:  # an image the agent cannot see: the person knows, first
            turn.add(TextReply(text=note))
        return message_text(sent, images=images), images.shown

    async def _close_message(self, conv: Conversation, request_id: str) -> None:
        """Close a question's message that the one who closed the question could not reach."""
        record = await self.store.get_pending(request_id)
        if record is not None:
            view = view_of(record)
            closed = ClarificationClosed(view=view, answered_line=answered_line(view))
            await self.outbox.send_quietly(conv, closed)
