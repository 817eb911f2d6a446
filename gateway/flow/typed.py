"""Typed answers to a thread's open question: a message that answers it (an option's number or
label, ``name: value`` lines, any text for an open question), the confirmation a typed go-ahead
pick needs first, the claim, and the answer's run.

A typed answer runs in its message's job. Its claim is kept under the job's inbound id
(``typed_answer_key``), so a later delivery of that job (its run kept for later while the agent
was away) runs the same answer, as a click's answer job would, rather than the text alone as a
new request once the question is no longer open.
"""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import (
    HumanInputResponse,
    TypedReply,
    looks_like_answer,
    parse_typed_reply,
    ui_text,
)
from clarigate.agent.protocol.coerce import clean
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import Conversation, InboundMessage
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ClarificationClosed, TextReply
from clarigate.gateway.flow.agent_run import AgentRun, Turn
from clarigate.gateway.flow.answering import expects_typed_answer
from clarigate.gateway.flow.answers import (
    already_answered_outcome,
    answered_by,
    answered_line,
    may_type_answer,
    other_answer,
    run_text_for,
    typed_answer_key,
    view_of,
)
from clarigate.gateway.flow.attachments import fetch_images, message_text
from clarigate.gateway.flow.claim import claim_answer
from clarigate.gateway.flow.commands import Control, parse_command
from clarigate.gateway.flow.confirm import TypedConfirm, as_attachments
from clarigate.gateway.flow.notices import notice_for_text
from clarigate.gateway.flow.typed_drafts import TypedDrafts
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import set_log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.keys import DONE_TTL_SECONDS
from clarigate.gateway.store.lookup import ThreadLookup
from clarigate.gateway.store.records import PendingRecord


class TypedAnswers:
    """Typed answers of the message jobs (``Dispatcher``'s)."""

    def __init__(
        self, config: GatewayConfig, store: Store, outbox: Outbox, control: Control, agent_run: AgentRun
    ) -> None:
        self.config = config
        self.store = store
        self.outbox = outbox
        self.control = control
        self.agent_run = agent_run
        self.confirm = TypedConfirm(store)  # a typed go-ahead pick asks to be confirmed first
        self.drafts = TypedDrafts(store)  # a form's fields typed over several messages

    async def settled_by_question(
        self,
        conv: Conversation,
        msg: InboundMessage,
        found: ThreadLookup,
        turn: Turn,
    ) -> bool:
        """True when ``msg`` is taken as the typed answer to the thread's open question (an answer
        run, the answer's problems, a confirmation asked for), or to the one someone answered
        first (``answered_first``, by the lookup's note); False when it runs as a new request.

        Only people who may answer it (``may_type_answer``) answer by typing; when what they type
        is no answer, the question closes (as superseded, for everyone) and the message runs as a
        request, never as the question's answer. Anyone else's message is a request of its own
        (``_left_open``). A request asked for explicitly (``InboundMessage.new_request``: ``/ask …``)
        is never an answer: it closes the question as any other new message does.
        """
        pending, thread_id = found.pending, found.thread_id
        if pending is None:
            return not msg.new_request and await self.answered_first(msg, found.answered, turn)
        if not may_type_answer(pending, msg):
            return False  # another member's message (or one written before it was asked): a request
        if msg.new_request or (msg.attachments and not msg.text.strip()):
            # an ``/ask``, or a photo or file alone, types no answer: it runs as a request (with
            # what it carries)
            await self.control.close_question(pending, msg.sender, "superseded")
            return False
        by = answered_by(conv.platform, msg.sender)
        confirmed = await self.confirm.before_typed(pending, msg.sender, msg.text, by)
        if isinstance(confirmed, str):  # not confirmed (or nothing to confirm): it stays open
            turn.add(TextReply(text=confirmed))
            _not_used(turn, msg, pending.request.locale)
            return True
        if confirmed is not None:  # the pick's photos and files go with it: this message runs
            msg = msg.model_copy(update={"attachments": [*confirmed.attachments, *msg.attachments]})
            return await self._claim_typed(conv, msg, pending, thread_id, turn, confirmed.response)
        looks = looks_like_answer(pending.request, msg.text)
        # the person chose "Other…" (or "Fill in") first: what they type is that answer; asked only
        # where it changes something (a free-text question takes any text as it is)
        chosen = (bool(pending.request.options) or not looks) and await expects_typed_answer(
            self.store, pending, msg.sender
        )
        if looks or chosen:  # an answer to this choice or form, or to the "Other…" chosen
            return await self._typed_answer(conv, msg, pending, thread_id, turn, chosen)
        await self.control.close_question(pending, msg.sender, "superseded")
        return False

    async def answers_aside(self, msg: InboundMessage) -> bool:
        """True when ``msg``, said to the people it mentions (``InboundMessage.said_to_others``), is
        still its writer's typed answer to the thread's open question, then taken as if it named
        no one: they may answer it (``may_type_answer``) and it takes this text (any text for a
        free-text question, an option or a form's lines that fit, anything once they chose
        "Other…" or "Fill in"). Anything else (a command too) is theirs, not the bot's: ignored,
        with no reply, and it closes nothing."""
        if msg.new_request or parse_command(msg.text) is not None:
            return False
        pending = (await self.store.chat_status(msg.conversation.thread_key)).pending
        if pending is None or not may_type_answer(pending, msg):
            return False
        return looks_like_answer(pending.request, msg.text) or await expects_typed_answer(
            self.store, pending, msg.sender
        )

    async def _typed_answer(
        self,
        conv: Conversation,
        msg: InboundMessage,
        pending: PendingRecord,
        thread_id: str,
        turn: Turn,
        chosen: bool = False,
    ) -> bool:
        """Take ``msg`` as the typed answer to ``pending`` and run it, or say what is wrong with it.

        Once its writer chose "Other…" (``chosen``) it is read as text in the box is
        (``other_answer``): "2" is two, not option 2; only an option's very label is that option.
        A form's fields may come over several messages: what the person's refused replies gave is
        kept, read under this one, and the reply says so (``TypedDrafts``).
        False when it is no answer after all (nothing parsed, or someone answered first).
        """
        set_log_context(request_id=pending.request_id)
        by = answered_by(conv.platform, msg.sender)
        kept = await self.drafts.kept(pending, msg.sender)  # a form's lines (no form has "Other…")
        typed = parse_typed_reply(pending.request, msg.text, by, kept=kept)
        if chosen and typed.response is not None:  # "Other…" chosen: the box's reading
            typed = TypedReply(response=other_answer(pending.request, clean(msg.text), by))
        kept_line = await self.drafts.settle(pending, msg.sender, typed, kept)
        if typed.response is None and typed.problems:
            turn.add(TextReply(text="\n".join([*typed.problems, *([kept_line] if kept_line else [])])))
            _not_used(turn, msg, pending.request.locale)  # refused: its photos and files go nowhere
            return True
        if typed.response is None:
            return False
        ask = await self.confirm.ask_first(pending, msg.sender, typed.response, msg.attachments)
        if ask is not None:  # a go-ahead option: it counts once the person confirms it
            turn.add(TextReply(text=ask))
            return True
        return await self._claim_typed(conv, msg, pending, thread_id, turn, typed.response)

    async def _claim_typed(
        self,
        conv: Conversation,
        msg: InboundMessage,
        pending: PendingRecord,
        thread_id: str,
        turn: Turn,
        response: HumanInputResponse,
    ) -> bool:
        """Claim a typed answer and run it; when someone answered first, the writer is told so
        (True); False when the question is gone otherwise (the message runs as a request)."""
        claim = await claim_answer(self.store, pending.request_id, msg.sender, response)
        if claim.status == "already_answered" and claim.record is not None:
            return self._told_answered(claim.record, msg, turn)  # someone else's answer came first
        if claim.status != "claimed" or claim.record is None:
            return False
        metrics.ANSWERED.inc()
        # a later delivery of this job (its run kept for later: the agent was away) runs this answer
        claimed = {
            "request_id": pending.request_id,
            "response": response.model_dump(mode="json"),
            # with the photos and files of a confirmed pick, which the "confirm" message lacks
            "attachments": [attachment.model_dump(mode="json") for attachment in msg.attachments],
        }
        await self.store.set_json(typed_answer_key(turn.job.inbound_id), claimed, DONE_TTL_SECONDS)
        view = view_of(claim.record)
        closed = ClarificationClosed(view=view, answered_line=answered_line(view))
        await self.outbox.send_quietly(conv, closed)
        await self._run_typed(conv, msg, pending, thread_id, turn, response)
        return True

    async def _run_typed(
        self,
        conv: Conversation,
        msg: InboundMessage,
        record: PendingRecord,
        thread_id: str,
        turn: Turn,
        response: HumanInputResponse,
    ) -> None:
        """Run a typed answer; a photo or file sent with it goes with it, as with any message."""
        cap, asked = self.config.agent.max_image_bytes, record.request.locale
        images = await fetch_images(self.outbox, msg, cap, asked)
        for note in images.notes:
            turn.add(TextReply(text=note))
        text = message_text(msg, run_text_for(record, response), images)
        turn.attached = bool(msg.attachments)
        await self.agent_run.run(conv, thread_id, text, response, msg.sender, turn, images.shown)

    async def answered_first(self, msg: InboundMessage, noted: dict[str, Any] | None, turn: Turn) -> bool:
        """True when ``msg`` is a typed answer to the thread's last question, written while that
        was still open (its own time counts, not its arrival) by someone who may answer it, and
        handled once another person's answer had been taken: told so (as a second tap is), it runs
        not as a request. A message that is no answer to it (``looks_like_answer``), or written
        once it was answered, is a new message. A time in whole seconds (Telegram's,
        ``InboundMessage.received_within``) in the second the answer was taken counts as before it.
        ``noted`` is the thread's last answer (``answered_key``), read by its lookup."""
        # a time in whole seconds (Telegram's, from the end of its second) may pass the answer's
        if noted is None or msg.received_at > float(noted.get("at", 0)) + msg.received_within:
            return False
        record = await self.store.get_pending(str(noted.get("request_id")))
        if record is None or record.status != "answered" or msg.received_at < record.created_at:
            return False
        if record.answered_by is None or record.answered_by.user_id == msg.sender.user_id:
            return False  # their own answer came first: what else they wrote goes on as a request
        if record.policy != "anyone" and record.asked_by and record.asked_by.user_id != msg.sender.user_id:
            return False  # someone else's question: their message is a request of its own
        if msg.attachments and not msg.text.strip():
            return False  # a photo or file alone types no answer
        if not looks_like_answer(record.request, msg.text) and not await expects_typed_answer(
            self.store, record, msg.sender
        ):
            return False
        return self._told_answered(record, msg, turn)

    def _told_answered(self, record: PendingRecord, msg: InboundMessage, turn: Turn) -> bool:
        """Tell ``msg``'s writer that ``record`` was answered first (by them, or by whom)."""
        set_log_context(request_id=record.request_id)
        turn.add(TextReply(text=already_answered_outcome(view_of(record), msg.sender).message))
        _not_used(turn, msg, record.request.locale)
        return True

    async def claimed_before(self, conv: Conversation, msg: InboundMessage, turn: Turn) -> bool:
        """A later delivery of a job that claimed a typed answer (its run kept for later): that
        answer runs, as a click's answer job would (its question no longer open, the text alone
        would run as a new request). False when the job claimed none."""
        if turn.job.deliveries <= 1:
            return False
        claimed = await self.store.get_json(typed_answer_key(turn.job.inbound_id))
        if not isinstance(claimed, dict):
            return False
        record = await self.store.get_pending(str(claimed["request_id"]))
        if record is None:
            return False
        set_log_context(thread_id=record.thread_id, request_id=record.request_id)
        if "attachments" in claimed:
            msg = msg.model_copy(update={"attachments": as_attachments(claimed["attachments"])})
        if not await self.control.is_current(conv, record.thread_id):  # /new meanwhile
            turn.add(TextReply(text=notice_for_text("answer_after_restart", msg.text)))
            _not_used(turn, msg, record.request.locale)
            return True
        response = HumanInputResponse.model_validate(claimed["response"])
        await self._run_typed(conv, msg, record, record.thread_id, turn, response)
        return True


def _not_used(turn: Turn, msg: InboundMessage, locale: Locale) -> None:
    """Tell the person, when ``msg`` came with photos or files, that its answer, refused or closed
    without running, took them nowhere (as an answer asked again says: ``attachment_asked_again``)."""
    if msg.attachments:
        turn.add(TextReply(text=ui_text("attachment_not_used", locale)))
