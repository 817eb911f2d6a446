"""Closing a question without an answer (a Cancel button, ``/cancel``, a new message typed
instead of an answer, ``/new``): it is claimed with a ``declined`` answer (``answer_declined``),
so it closes exactly once and for everyone, whoever closes it first.

A graph's own ``interrupt()`` may refuse that declined answer (``may_refuse_decline``): the person
who dismissed it is then told after its run that the task stopped (``dismissed_in``,
``stopped_words``). ``QuestionClosing`` is a part of ``clarigate.gateway.flow.commands.Control``.

The follow-up run of a ``/cancel`` is queued with the claim (``Store.claim_answer``), before the
``/cancel``'s own reply ("✖ Cancelled the question …") is sent: it waits for that reply
(``after_reply``), so the person reads that the question was cancelled before whatever the run says.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from clarigate.agent.interrupt_kinds import INTERRUPT, parse_request_id
from clarigate.agent.protocol import DeclineReason, HumanInputResponse, answer_declined
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import AnswerJob, Sender
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import ClarificationClosed, TextReply
from clarigate.gateway.flow.answers import answered_by, answered_line, run_text_for, view_of
from clarigate.gateway.flow.claim import claim_answer
from clarigate.gateway.flow.notices import notice
from clarigate.gateway.runtime import metrics
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import ClaimResult, PendingRecord

log = logging.getLogger("clarigate.gateway.flow.commands")  # the commands' lines keep the name logs know

#: How long a ``/cancel``'s follow-up run waits for the ``/cancel``'s reply to be delivered (seconds):
#: far longer than a reply takes; a ``/cancel`` held by a worker that died holds it up no longer.
REPLY_WAIT = 5.0
#: The longest pause between two looks at whether that reply was delivered (seconds).
MAX_REPLY_POLL = 0.25


def may_refuse_decline(record: PendingRecord) -> bool:
    """True when ``record``'s question is a graph's own ``interrupt()``, whose ``response_schema``
    may refuse a declined answer (an approval takes a rejection, ``ask_clarification`` any answer)."""
    parsed = parse_request_id(record.request_id)
    return parsed is not None and parsed[0] == INTERRUPT


def dismissed_in(
    record: PendingRecord, response: HumanInputResponse, locale: Locale | None = None
) -> Locale | None:
    """The locale to tell the person in that ``record``'s task stopped, should its graph refuse
    ``response``: a declined answer (Cancel, ``/cancel``), in the language the person closed it in
    (``locale``), else the question's; None for any other answer."""
    return (locale or record.request.locale) if response.response_kind == "declined" else None


def stopped_words(locale: Locale | None, dismissed: bool) -> TextReply | None:
    """What the person who dismissed a question (``locale``: ``dismissed_in``) is told after its run
    when the graph refused the declined answer (``dismissed``): the task stopped. The question's
    closing (its "✖ Cancelled by …", the ``/cancel`` reply) already said it was cancelled."""
    if locale is None or not dismissed:
        return None
    return TextReply(text=notice("task_stopped", locale))


class QuestionClosing:
    """Closes questions without an answer (mixed into ``Control``)."""

    store: Store
    outbox: Outbox
    track: Callable[[str], None] | None  # told the inbound id of each follow-up run it enqueues

    async def close_question(
        self,
        record: PendingRecord,
        sender: Sender,
        reason: DeclineReason,
        after_reply_of: str | None = None,
        locale: Locale | None = None,
    ) -> ClaimResult:
        """Claim ``record`` with a declined answer and show it closed for everyone.

        ``cancelled``: the agent is told in a follow-up run on the thread (as a click would be),
        which says when the task stopped (``stopped_words``); it runs once the job
        ``after_reply_of`` (the ``/cancel``) has had its reply (``after_reply``), in the language the
        person closed it in (``locale``: the ``/取消`` typed to an English question), else the question's.
        ``superseded`` (a new message runs instead), ``restarted`` (the thread is left), ``replaced``
        and ``crossed`` (an answer to an earlier question runs first): no run.
        """
        conv = record.conversation
        response = answer_declined(record.request, answered_by(conv.platform, sender), reason)
        followup = None
        inbound_id = f"answer:{record.request_id}"
        if reason == "cancelled":
            payload = AnswerJob(
                conversation=conv,
                thread_id=record.thread_id,
                request_id=record.request_id,
                response=response,
                sender=sender,
                text=run_text_for(record, response, locale),
                dismissed_in=dismissed_in(record, response, locale),
                after_reply_of=after_reply_of,
                locale=locale,
            ).model_dump_json()
            followup = (inbound_id, conv.thread_key, payload)
        claim = await claim_answer(self.store, record.request_id, sender, response, followup=followup)
        if claim.status == "claimed" and claim.record is not None:
            metrics.DECLINED.inc()
            if followup is not None and self.track is not None:
                self.track(inbound_id)
            log.info("closed clarification %s: %s", record.request_id, reason)
            # (``clarigate admin`` where the platform is not configured has no adapter to show it)
            if any(adapter.platform == conv.platform for adapter in self.outbox.adapters):
                view = view_of(claim.record)
                closed = ClarificationClosed(view=view, answered_line=answered_line(view))
                await self.outbox.send_quietly(conv, closed)
        return claim


async def after_reply(store: Store, inbound_id: str | None) -> None:
    """Return once the job ``inbound_id`` (the ``/cancel`` that queued this follow-up run) is
    complete, its reply delivered; at the latest after ``REPLY_WAIT``. A few store reads, made
    only for such a run (none for a message or a click's answer)."""
    if inbound_id is None:
        return
    delay, deadline = 0.005, time.monotonic() + REPLY_WAIT
    try:
        while not await store.is_done(inbound_id):
            if time.monotonic() >= deadline:
                log.info("the reply of %s is not delivered yet: its follow-up runs anyway", inbound_id)
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, MAX_REPLY_POLL)
    except Exception as exc:  # noqa: BLE001 (the order of two lines: the run goes on all the same)
        log.warning("could not tell whether %s had its reply (%s): its follow-up runs", inbound_id, exc)
