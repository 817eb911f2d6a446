"""Feedback on answers: 👍/👎 under a run's final answer, one vote per person and answer.

The run that gives a final answer (no question, no error) records, before the answer is sent,
what the answer's token stands for (``FeedbackTarget``: the job, the agent thread, the agent's
run id; saved in the same store step as the turn's delivery record) and hands the adapter a
``FeedbackAsk``. A click comes back as an ``InboundFeedback``;
the vote is set in one store step (``Store.cast_vote``), so a second click by the same person
changes their vote and never adds one, and another person's vote counts on its own.

Each vote given is counted (``clarigate_feedback_total{platform,vote}``, the bot label added at
exposition); a vote changed also counts the one it replaced as withdrawn
(``clarigate_feedback_withdrawn_total``): given minus withdrawn is the votes that stand. One log
line names the run's ids; with LangSmith tracing on, the vote becomes feedback on the traced run
(``feedback_trace``), in the background (never on the click's ack path).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Coroutine
from typing import Any

from pydantic import BaseModel, ValidationError

from clarigate.agent.protocol import ui_text
from clarigate.agent.protocol.models import Locale
from clarigate.gateway.boundary.messages import (
    Conversation,
    FeedbackAsk,
    FeedbackOutcome,
    FeedbackStatus,
    InboundFeedback,
    Sender,
)
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.flow.feedback_trace import trace_vote
from clarigate.gateway.flow.notices import language_hint, notice
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.logs import log_context
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.records import SavedState

log = logging.getLogger(__name__)


class FeedbackTarget(BaseModel):
    """What an answer's feedback token stands for (kept under ``feedback:{token}``)."""

    inbound_id: str  # the job that answered
    thread_id: str  # its agent thread
    run_id: str | None = None  # the agent's run (LangSmith's root run), when the runner names it
    conversation: Conversation  # where the answer was given (the allow-lists apply to votes too)
    locale: Locale = "en"

    @property
    def platform(self) -> str:
        """The answer's platform."""
        return self.conversation.platform


def target_key(token: str) -> str:
    """The store key of an answer's ``FeedbackTarget``."""
    return f"feedback:{token}"


def ask_feedback(
    config: GatewayConfig, items: list[Any], first: int, target: FeedbackTarget
) -> SavedState | None:
    """Put 👍/👎 under the run's final answer: the last reply among ``items[first:]`` (the
    run's own). Returns the target to save with the turn's delivery record (``Store.record_delivery``,
    before anything is sent, through a store outage like the rest of the record); None when
    feedback is off or the run said nothing."""
    if not config.feedback:
        return None
    last = next(
        (i for i in range(len(items) - 1, first - 1, -1) if isinstance(items[i], TextReply)),
        None,
    )
    if last is None or items[last].private_to is not None:
        return None
    token = secrets.token_urlsafe(12)
    ask = FeedbackAsk(token=token, locale=target.locale)
    items[last] = items[last].model_copy(update={"feedback": ask})
    return target_key(token), target.model_dump(mode="json"), config.feedback_ttl_seconds


class FeedbackVotes:
    """Takes feedback clicks in: checks the answer, sets the vote, counts, logs and traces it."""

    def __init__(
        self,
        config: GatewayConfig,
        store: Store,
        background: Callable[[Coroutine[Any, Any, None]], None],
        allowed: Callable[[Conversation, Sender], bool],
    ) -> None:
        self.config = config
        self.store = store
        self.background = background  # runs the LangSmith call off the click's path
        self.allowed = allowed  # the platform's allow-lists (``Gateway._allowed``)

    async def submit(self, feedback: InboundFeedback) -> FeedbackOutcome:
        """Record ``feedback``: one vote per person and answer (see the module's docstring)."""
        target = await self._target(feedback.token)
        if target is None:
            locale = language_hint(feedback.language) or "en"
            return FeedbackOutcome(status=FeedbackStatus.EXPIRED, message=ui_text("feedback_expired", locale))
        if not self.allowed(target.conversation, feedback.sender):
            refused = notice("refused", target.locale)
            return FeedbackOutcome(status=FeedbackStatus.REFUSED, message=refused)
        person, vote = feedback.sender.user_id, feedback.vote
        ttl = self.config.feedback_ttl_seconds
        previous = await self.store.cast_vote(feedback.token, person, vote, ttl)
        if previous == vote:
            status = FeedbackStatus.UNCHANGED
        else:
            status = FeedbackStatus.RECORDED if previous is None else FeedbackStatus.CHANGED
            metrics.feedback_given(target.platform, vote).inc()
            if previous is not None:
                metrics.feedback_withdrawn(target.platform, previous).inc()
            self._log(target, feedback, previous)
            if target.run_id:
                first = previous is None
                self.background(
                    trace_vote(target.run_id, feedback.token, person, vote, target.platform, first)
                )
        key = "feedback_changed" if status is FeedbackStatus.CHANGED else "feedback_thanks"
        return FeedbackOutcome(status=status, vote=vote, message=ui_text(key, target.locale))

    async def _target(self, token: str) -> FeedbackTarget | None:
        found = await self.store.get_json(target_key(token))
        try:
            return FeedbackTarget.model_validate(found) if found else None
        except ValidationError:
            log.warning("feedback token %s names an unreadable answer: taken as expired", token)
            return None

    @staticmethod
    def _log(target: FeedbackTarget, feedback: InboundFeedback, previous: str | None) -> None:
        with log_context(platform=target.platform, thread_id=target.thread_id, inbound_id=target.inbound_id):
            log.info(
                "feedback %s on the answer of %s by %s%s (run %s, event %s)",
                feedback.vote,
                target.inbound_id,
                feedback.sender.user_id,
                f", was {previous}" if previous else "",
                target.run_id or "unknown",
                feedback.event_id,
            )
