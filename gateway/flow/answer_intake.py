"""``GatewayPort``'s answers: a clarification looked up by its button token, whether a person may
answer it, and an answer checked and atomically claimed (its next run enqueued).

``AnswerIntake`` is a part of ``clarigate.gateway.flow.intake.Gateway``, which it is mixed into:
it uses the gateway's config, store, conversation control, allow-lists and job tracking.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from clarigate.gateway.boundary.messages import (
    AnswerJob,
    AnswerOutcome,
    AnswerStatus,
    Attachment,
    Conversation,
    InboundAnswer,
    PendingView,
    Sender,
)
from clarigate.gateway.flow.answering import expect_typed_answer
from clarigate.gateway.flow.answers import (
    already_answered_outcome,
    answered_line,
    expired_outcome,
    policy_refusal,
    refusal_for,
    restarted_outcome,
    run_text_for,
    view_of,
)
from clarigate.gateway.flow.claim import claim_answer
from clarigate.gateway.flow.closing import dismissed_in
from clarigate.gateway.flow.commands import Control
from clarigate.gateway.flow.confirm import answer_for
from clarigate.gateway.flow.notices import notice
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import PendingRecord

log = logging.getLogger("clarigate.gateway.flow.intake")  # the gateway's lines keep the name logs know

#: How long, and for how many tokens, a record read by ``pending_by_token`` serves the click after.
RECENT_SECONDS = 5.0
MAX_RECENT = 1024


class AnswerIntake:
    """The answers half of ``GatewayPort`` (mixed into ``Gateway``)."""

    config: GatewayConfig
    store: Store
    control: Control
    _allowed: Callable[[Conversation, Sender], bool]  # the platforms' allow-lists
    # token -> (when, record) read by ``pending_by_token``: the click that follows reuses it
    _read_recently: dict[str, tuple[float, PendingRecord]]

    if TYPE_CHECKING:

        def _track(self, inbound_id: str) -> None: ...  # ``Gateway``'s: remembered for ``drain``

    async def pending_by_token(self, token: str) -> PendingView | None:
        """The clarification behind a button token, or None if unknown or expired."""
        record = await self.store.pending_for_token(token)
        if record is None:
            return None
        now, recent = time.monotonic(), self._read_recently
        recent.pop(token, None)
        recent[token] = (now, record)
        while len(recent) > MAX_RECENT or now - next(iter(recent.values()))[0] >= RECENT_SECONDS:
            del recent[next(iter(recent))]  # oldest first: lookups not followed by a click
        return view_of(record)

    async def may_answer(
        self, view: PendingView, sender: Sender, *, expect_typing: bool = True
    ) -> AnswerOutcome | None:
        """None if ``sender`` may answer ``view`` now, else the refusal to show.

        A yes also records that the person is answering by typing, unless ``expect_typing`` is
        False (see ``GatewayPort.may_answer``).
        """
        if not self._allowed(view.conversation, sender):
            refused = notice("refused", view.request.locale)
            return AnswerOutcome(status=AnswerStatus.NOT_ALLOWED, message=refused, view=view)
        refusal = refusal_for(view, sender)
        if refusal is not None:
            return refusal
        record = await self.store.get_pending(view.request.request_id)
        if record is None:
            return expired_outcome(view, view.request.locale)
        current = view_of(record)
        refusal = refusal_for(current, sender) or policy_refusal(record, current, sender)
        if refusal is not None:
            return refusal
        if not await self.control.is_current(record.conversation, record.thread_id):
            return restarted_outcome(current)
        # asked before "Other…" or "Fill in": what this person types next is meant as the answer
        if expect_typing:
            await expect_typed_answer(self.store, current, sender)
        return None

    async def submit_answer(self, answer: InboundAnswer) -> AnswerOutcome:
        """Check and atomically claim an answer; on success the next run is enqueued.

        At most two store round trips: the record (none when the adapter has just read it with
        ``pending_by_token``), then the claim, which sets the click's dedupe marker in the same step.
        """
        record = self._just_read(answer.token) or await self._record_for(answer)
        platform = record.conversation.platform if record else (answer.conversation or _NOWHERE).platform
        metrics.inbound_events(platform, "answer").inc()
        seen = (f"interaction:{platform}:{answer.event_id}", self.config.seen_ttl_seconds)
        try:
            outcome = await self._check_and_claim(record, answer, platform, seen)
        except Exception:
            # the platform retries a failed callback: let that retry through instead of calling it a
            # duplicate (a claim that did happen makes the retry "already answered", never a 2nd run)
            await self._release_quietly(seen[0])
            raise
        if outcome.status is AnswerStatus.DUPLICATE:
            metrics.duplicates_dropped(platform).inc()
        return outcome

    def _just_read(self, token: str | None) -> PendingRecord | None:
        """The record ``pending_by_token`` read for this token moments ago (the click's own lookup).

        Safe to reuse: what the checks read from it does not change, and the claim itself tests
        whether the request is still open.
        """
        found = self._read_recently.pop(token, None) if token else None
        return found[1] if found is not None and time.monotonic() - found[0] < RECENT_SECONDS else None

    async def _check_and_claim(
        self, record: PendingRecord | None, answer: InboundAnswer, platform: str, seen: tuple[str, int]
    ) -> AnswerOutcome:
        if record is None:
            metrics.EXPIRED.inc()
            return expired_outcome()
        view = view_of(record)
        if not self._allowed(record.conversation, answer.sender):
            refused = notice("refused", record.request.locale)
            return AnswerOutcome(status=AnswerStatus.NOT_ALLOWED, message=refused, view=view)
        refusal = refusal_for(view, answer.sender) or policy_refusal(record, view, answer.sender)
        if refusal is not None:
            # a replayed click on a question it answered is a duplicate, not "already answered"
            if refusal.status is AnswerStatus.ALREADY_ANSWERED and not await self.store.first_time(*seen):
                return AnswerOutcome(status=AnswerStatus.DUPLICATE, view=view)
            if refusal.status is AnswerStatus.EXPIRED:
                metrics.EXPIRED.inc()
            return refusal
        response, invalid, attachments = await answer_for(self.store, record, answer, platform)
        if response is None:
            return invalid or expired_outcome(view, record.request.locale)
        return await self._claim(record, answer.sender, response, seen, *answer.attachments, *attachments)

    async def _claim(
        self, record: PendingRecord, sender: Sender, response: Any, seen: tuple[str, int], *files: Attachment
    ) -> AnswerOutcome:
        inbound_id = f"answer:{record.request_id}"
        payload = AnswerJob(
            conversation=record.conversation,
            thread_id=record.thread_id,
            request_id=record.request_id,
            response=response,
            sender=sender,
            text=run_text_for(record, response),
            dismissed_in=dismissed_in(record, response),
            attachments=list(files),  # sent with the form's values, or a pick confirmed in a box
        ).model_dump_json()
        claim = await claim_answer(
            self.store,
            record.request_id,
            sender,
            response,
            followup=(inbound_id, record.conversation.thread_key, payload),
            seen=seen,
            # a question of a conversation restarted since (/new): its answer would run on the old thread
            current_in=record.conversation.thread_key,
        )
        if claim.status == "duplicate":
            return AnswerOutcome(status=AnswerStatus.DUPLICATE, view=view_of(claim.record or record))
        if claim.status == "restarted":
            return restarted_outcome(view_of(claim.record or record))
        if claim.status == "missing" or claim.record is None:
            metrics.EXPIRED.inc()
            return expired_outcome(view_of(record), record.request.locale)
        view = view_of(claim.record)
        if claim.status == "already_answered":
            return already_answered_outcome(view, sender)
        (metrics.DECLINED if response.response_kind == "declined" else metrics.ANSWERED).inc()
        with log_context(
            platform=record.conversation.platform,
            chat=record.conversation.chat_id,
            thread_id=record.thread_id,
            request_id=record.request_id,
            inbound_id=inbound_id,
        ):
            verb = "declined" if response.response_kind == "declined" else "answered"
            log.info("clarification %s by %s: next run queued", verb, sender.user_id)
        self._track(inbound_id)
        line = answered_line(view)
        return AnswerOutcome(status=AnswerStatus.ACCEPTED, message=line, view=view, answered_line=line)

    async def _release_quietly(self, seen_key: str) -> None:
        try:
            await self.store.forget(seen_key)
        except Exception:
            log.warning("could not release %s after a failed answer", seen_key, exc_info=True)

    async def _record_for(self, answer: InboundAnswer) -> PendingRecord | None:
        if answer.token:
            return await self.store.pending_for_token(answer.token)
        if answer.request_id:
            return await self.store.get_pending(answer.request_id)
        return None


_NOWHERE = Conversation(platform="unknown", chat_id="")
