"""Delivery: a job's recorded outputs reach the platform, retried alone, never by re-running the agent.

A job's replies, question or error are first recorded in the store (``DeliveryPlan``); then
each item is sent in order and its outcome noted, so a replica that takes the job over sends
only what was not noted yet. Failures are classified by the adapter (``DeliveryFailed``):

- transient (rate limit, 5xx, network, or any other exception): retried with backoff, never
  before the platform's ``retry_after``, until ``delivery_budget_seconds`` after the run
  recorded it (the same deadline on every replica), by the one retry policy
  (``clarigate.gateway.boundary.retry``): the adapter makes one platform call per attempt;
- permanent (invalid payload, chat gone): a question falls back once to its text rendering
  (answerable by a typed reply), a file to the line saying it could not be sent (its
  ``fallback_text``; one recorded without it gets it in the job's language: ``with_file_lines``),
  each counted as a fallback with one WARNING; anything else is abandoned, and so is a fallback
  refused in turn;
- refused by the chat itself (``DeliveryFailed.chat_refused``: blocked, kicked): no fallback,
  and the job's later items are not tried either (a question among them, never seen, is closed:
  ``flow.claim.close_unseen``); that is the person's choice, not a failure:
  the recipient is gone (counted in ``clarigate_deliveries_recipient_gone_total{platform}``, one
  WARNING for the refusal, INFO for each later item not tried).

An item abandoned otherwise is counted (``clarigate_deliveries_given_up_total{platform}``, which
the ``ClarigateRepliesGivenUp`` alert watches) and logged at ERROR with the inbound id, delivery id
and conversation: never dropped silently.

What is left: a crash after the platform accepted an item and before its outcome is noted
(or a store that lost the note: Redis restarted with ``appendfsync everysec``) leaves the item
unproven. Before the replica that has the job then sends it, it asks the platform
(``PlatformAdapter.already_delivered``: Slack reads the item's ``delivery_id`` back from message
metadata); a platform that deduplicates by the id absorbs the re-send (Feishu's ``uuid``, for an
hour); one that can do neither (Telegram) shows it twice.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Annotated, Any

from pydantic import BaseModel, Field

from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound import Outbox
from clarigate.gateway.boundary.outbound_items import (
    ClarificationOut,
    ErrorReply,
    FileReply,
    LiveEnd,
    TextReply,
)
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.boundary.retry import RetryPolicy, transient
from clarigate.gateway.boundary.surrogates import clean_model
from clarigate.gateway.flow.claim import close_unseen
from clarigate.gateway.flow.files_out import with_file_lines
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import DeliveryRecord, Job

log = logging.getLogger(__name__)

#: Transient failures are retried after 0.5 s, 1 s, 2 s, … (jittered) up to 30 s apart, never
#: sooner than the platform's ``retry_after``; the stop is the plan's deadline.
DELIVERY_RETRIES = RetryPolicy(first=0.5, cap=30.0, jitter=0.2)
#: The writes that follow a send: retried after 0.05 s, 0.1 s, … up to 1 s apart.
PERSIST_RETRIES = RetryPolicy(first=0.05, cap=1.0)
#: The namespace of delivery ids (uuid5 of the inbound id and the item's place).
DELIVERY_NAMESPACE = uuid.UUID("0f6f3c1e-6a55-4d5e-9a43-5b2f1c8f1d2e")

Item = Annotated[TextReply | ClarificationOut | ErrorReply | LiveEnd | FileReply, Field(discriminator="kind")]

#: Outcomes noted per item.
SENT, FALLBACK, ABANDONED = "sent", "fallback", "abandoned"
REFUSED = "refused"  # what ``_deliver_item`` says when the chat refused the bot (noted as abandoned)


class Superseded(Exception):
    """Another worker took the job over (this one stalled): it replies, this one stays silent."""


class DeliveryPlan(BaseModel):
    """What a job is to deliver, recorded before the first send."""

    conversation: Conversation
    items: list[Item]
    created_at: float  # unix time the run recorded it: the delivery budget counts from here


def delivery_id(inbound_id: str, index: int, variant: str = "") -> str:
    """The stable id of item ``index`` of a job (``variant`` for its text fallback)."""
    return str(uuid.uuid5(DELIVERY_NAMESPACE, f"{inbound_id}#{index}{variant}"))


def new_plan(inbound_id: str, conversation: Conversation, items: list[Any]) -> DeliveryPlan:
    """A plan for ``items``, each given its delivery id, half a UTF-16 pair in its text made U+FFFD
    (``surrogates.clean_model``): the plan is recorded as JSON."""
    numbered = [
        clean_model(item).model_copy(update={"delivery_id": delivery_id(inbound_id, i)})
        for i, item in enumerate(items)
    ]
    return DeliveryPlan(conversation=conversation, items=numbered, created_at=time.time())


def accepted_at(entry_id: str | None, plan: DeliveryPlan) -> float:
    """When the job was accepted (its stream entry id is the time in ms): nothing of it was sent
    before. The plan's time when there is no entry id (a plan recorded again after a lost one is
    later than the first sends)."""
    try:
        return min(plan.created_at, int(str(entry_id).split("-")[0]) / 1000)
    except ValueError:
        return plan.created_at


#: How long a write that follows a send is retried through a store outage, at least (seconds).
PERSIST_AT_LEAST = 60.0


def persist_budget(config: GatewayConfig) -> float:
    """How long the writes that follow a send are retried: more than the stale-claim time, so
    the job stays held (renewed by its keeper) rather than being claimed and sent again."""
    return max(config.stale_claim_seconds, PERSIST_AT_LEAST)


async def persist(call: Callable[[], Awaitable[Any]], what: str, within: float) -> Any:
    """Run a store call, retried through a store outage for up to ``within`` seconds.

    For writes that follow a send: giving up there would make another replica send again.
    """

    def note(attempt: int, failure: BaseException, wait: float) -> None:
        log.warning("%s failed: retrying in %.2f s", what, wait)

    return await replace(PERSIST_RETRIES, within=within).call(call, on_retry=note)


class Deliverer:
    """Sends a job's recorded items, notes each outcome, retries and falls back as classified."""

    def __init__(self, config: GatewayConfig, store: Store, outbox: Outbox) -> None:
        self.config = config
        self.store = store
        self.outbox = outbox
        for platform in config.enabled_platforms():  # exported at 0 from the start (alerts add it up)
            metrics.DELIVERIES_GIVEN_UP.labels(platform=platform)

    async def deliver(
        self,
        job: Job,
        record: DeliveryRecord,
        may_send: Callable[[], Awaitable[None]],
        unproven: bool = False,
    ) -> None:
        """Deliver every item of ``job``'s ``record`` without a noted outcome, in order; the caller
        then completes the job, which stands for the last item's outcome.

        ``may_send`` is awaited before every send: it raises when this replica no longer holds
        the job (then nothing more is sent from here). ``unproven``: the store cannot prove what
        was sent (the job was taken over, or read again after a store outage): each item is first
        looked for on the platform, where the adapter can tell.
        """
        inbound_id, entry_id = job.inbound_id, job.entry_id
        plan = DeliveryPlan.model_validate_json(record.plan)
        plan.items = with_file_lines(plan.items, job)  # a file recorded without its line gets one
        deadline = plan.created_at + self.config.delivery_budget_seconds
        within = persist_budget(self.config)
        last = len(plan.items) - 1
        refused = False  # the chat refused the bot: nothing more is sent to it
        for index, item in enumerate(plan.items):
            if index in record.outcomes:
                continue
            if refused:
                outcome = self._recipient_gone(inbound_id, plan.conversation, item)
            elif unproven and await self._found(inbound_id, index, plan, item, accepted_at(entry_id, plan)):
                outcome = SENT
            else:
                outcome = await self._deliver_item(
                    inbound_id, index, plan.conversation, item, deadline, may_send
                )
                refused = outcome == REFUSED
                outcome = ABANDONED if refused else outcome
            if refused and isinstance(item, ClarificationOut):  # nobody saw it: not left open
                await persist(
                    lambda q=item.request: close_unseen(self.store, q),  # type: ignore[misc]
                    f"closing the refused question of {inbound_id}",
                    within,
                )
            if index == 0 and entry_id is not None and outcome != ABANDONED:
                metrics.observe_receive_to_reply(entry_id)  # from the job's arrival to its first reply
            if index == last:
                break  # completing the job, next, notes the end of its delivery (one trip fewer)
            await persist(
                lambda i=index, o=outcome: self.store.mark_delivered(inbound_id, i, o),  # type: ignore[misc]
                f"noting the delivery of {inbound_id} #{index}",
                within,
            )

    async def _found(self, inbound_id: str, index: int, plan: DeliveryPlan, item: Any, since: float) -> bool:
        """True when the platform shows ``item`` already (sent before a crash or a lost mark): the
        item itself or, for a question, the text it falls back to."""
        found = await self.outbox.already_delivered(plan.conversation, item, since)
        if isinstance(found, MessageRef) and isinstance(item, ClarificationOut):
            await self._remember_question(item, found)  # to update it once answered
        if not found and isinstance(item, ClarificationOut | FileReply):
            found = await self.outbox.already_delivered(
                plan.conversation, _text_of(inbound_id, index, item), since
            )
        if found:
            metrics.DELIVERIES_FOUND.labels(platform=plan.conversation.platform).inc()
            log.info(
                "%s of job %s (delivery id %s) is on %s already: not sent again",
                item.kind,
                inbound_id,
                item.delivery_id,
                plan.conversation.platform,
            )
        return bool(found)

    async def _deliver_item(
        self,
        inbound_id: str,
        index: int,
        conv: Conversation,
        item: TextReply | ClarificationOut | ErrorReply | LiveEnd | FileReply,
        deadline: float,
        may_send: Callable[[], Awaitable[None]],
    ) -> str:
        """Send one item, retried as long as its failures are transient and the budget lasts; a
        permanent refusal falls back to another rendering once, or abandons the item."""
        original = item
        while True:
            try:
                ref = await self._send_retried(conv, item, deadline, may_send)
            except (asyncio.CancelledError, Superseded):
                raise
            except DeliveryFailed as exc:
                if not exc.permanent or exc.chat_refused:
                    return self._given_up(inbound_id, conv, item, exc)
                if isinstance(item, LiveEnd):
                    log.info("live message of %s gone on %s (%s)", inbound_id, conv.platform, exc.code)
                    return SENT
                instead = self._instead(inbound_id, index, conv, item, exc)
                if instead is None:
                    return self._abandon(inbound_id, conv, item, f"refused: {exc.code or exc}")
                item = instead
                continue
            except Exception:  # network trouble, an adapter bug, the store behind the hold check
                return self._abandon(inbound_id, conv, item, "still failing when the delivery budget ran out")
            return await self._sent(original, item, ref)

    def _instead(
        self, inbound_id: str, index: int, conv: Conversation, item: Any, exc: DeliveryFailed
    ) -> TextReply | None:
        """What is sent once instead of an item refused for good: a question's text, the line
        saying a file could not be sent, a reply posted anew (its live message gone); None when
        nothing is."""
        why = exc.code or exc
        if isinstance(item, ClarificationOut | FileReply):  # a file's line said once: its own delivery id
            what = f"file {item.name}" if isinstance(item, FileReply) else "question"
            log.warning(
                "%s %s refused by %s (%s): sending its text instead",
                what,
                item.delivery_id,
                conv.platform,
                why,
            )
            return _text_of(inbound_id, index, item)
        if isinstance(item, TextReply) and item.live is not None:
            # the live message cannot become the reply (gone, stream refused): post it anew
            log.warning(
                "reply %s could not finish its live message on %s (%s): posting it instead",
                item.delivery_id,
                conv.platform,
                why,
            )
            return item.model_copy(update={"live": None})
        return None

    async def _send_retried(
        self,
        conv: Conversation,
        item: TextReply | ClarificationOut | ErrorReply | LiveEnd | FileReply,
        deadline: float,
        may_send: Callable[[], Awaitable[None]],
    ) -> MessageRef | None:
        """One send per attempt, retried by the one policy until ``deadline``; raises the last
        failure (a permanent one at once)."""

        async def attempt() -> MessageRef | None:
            await may_send()
            return await self.outbox.send(conv, item)

        def note(attempt_number: int, failure: BaseException, wait: float) -> None:
            metrics.DELIVERY_RETRIES.inc()
            log.warning(
                "delivering %s to %s failed (attempt %d, %s: %s): retrying in %.1f s",
                item.delivery_id,
                conv.platform,
                attempt_number,
                type(failure).__name__,
                failure,
                wait,
            )

        return await DELIVERY_RETRIES.call(
            attempt,
            deadline=deadline,
            retry_on=lambda failure: transient(failure) and not isinstance(failure, Superseded),
            on_retry=note,
        )

    async def _sent(self, original: Any, item: Any, ref: MessageRef | None) -> str:
        """Count a delivery; a question shown natively gets its message remembered (to update it)."""
        if isinstance(original, LiveEnd):
            return SENT  # closing a live message is not a reply
        if item is not original and isinstance(original, TextReply):
            metrics.DELIVERED.inc()  # posted anew instead of finishing its live message
            return SENT
        if item is not original:
            metrics.DELIVERED_AS_TEXT.inc()
            return FALLBACK
        if isinstance(original, ClarificationOut) and ref is not None:
            await self._remember_question(original, ref)
        metrics.DELIVERED.inc()
        return SENT

    async def _remember_question(self, question: ClarificationOut, ref: MessageRef) -> None:
        """Note the message showing ``question``, to update it once answered."""
        request_id = question.request.request_id
        await persist(
            lambda: self.store.set_message_ref(request_id, ref),
            f"remembering the message of {request_id}",
            persist_budget(self.config),
        )

    def _given_up(self, inbound_id: str, conv: Conversation, item: Any, exc: DeliveryFailed) -> str:
        """A transient failure past the budget (abandoned at ERROR), or the chat's refusal of the
        bot (the recipient gone, at WARNING, and ``REFUSED``: nothing more is sent there)."""
        if not exc.chat_refused:
            return self._abandon(inbound_id, conv, item, "still failing when the delivery budget ran out")
        self._recipient_gone(inbound_id, conv, item, exc)
        return REFUSED

    @staticmethod
    def _recipient_gone(
        inbound_id: str, conv: Conversation, item: Any, exc: DeliveryFailed | None = None
    ) -> str:
        """Count and log an item the recipient refuses (blocked the bot, removed it): not a failure
        anyone here can fix, so not a given-up delivery. The refusal (``exc``) is one WARNING; each
        later item of the job, not tried, one INFO line."""
        metrics.DELIVERIES_RECIPIENT_GONE.labels(platform=conv.platform).inc()
        log.log(
            logging.INFO if exc is None else logging.WARNING,
            "recipient gone: %s of job %s (delivery id %s) not delivered to %s chat %s: %s",
            item.kind,
            inbound_id,
            item.delivery_id,
            conv.platform,
            conv.chat_id,
            "not tried after the chat refused the bot"
            if exc is None
            else f"the chat refused the bot ({exc})",
        )
        return ABANDONED

    @staticmethod
    def _abandon(inbound_id: str, conv: Conversation, item: Any, why: str) -> str:
        """Count and log an item given up, at ERROR."""
        metrics.DELIVERIES_GIVEN_UP.labels(platform=conv.platform).inc()
        log.error(
            "delivery abandoned: %s of job %s (delivery id %s) to %s chat %s: %s",
            item.kind,
            inbound_id,
            item.delivery_id,
            conv.platform,
            conv.chat_id,
            why,
        )
        return ABANDONED


def _text_of(inbound_id: str, index: int, item: ClarificationOut | FileReply) -> TextReply:
    """The text sent instead of item ``index`` (a question's text, the line for a refused file),
    under a delivery id of its own."""
    text = item.fallback_text
    from_agent = isinstance(item, ClarificationOut)  # the question's words; a file's line is the core's
    return TextReply(text=text, delivery_id=delivery_id(inbound_id, index, ":text"), from_agent=from_agent)
