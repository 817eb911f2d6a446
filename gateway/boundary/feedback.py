"""Feedback on answers: the 👍/👎 under a final answer and what the core did with a click.

Kept apart from ``messages`` (which imports these) so either module stays readable; a click itself
is ``messages.InboundFeedback``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict

from clarigate.agent.protocol.models import Locale

#: A person's verdict on an answer: 👍 or 👎.
Vote = Literal["up", "down"]


class FeedbackAsk(BaseModel):
    """👍/👎 under a final answer (``TextReply.feedback``): the adapter shows the two controls its
    platform has for it, each carrying ``token`` and its vote, and hands a click to the core as an
    ``InboundFeedback`` (``GatewayPort.submit_feedback``). ``locale`` is for any words the platform
    wants beside the icons."""

    model_config = ConfigDict(frozen=True)

    token: str
    locale: Locale = "en"


class FeedbackStatus(StrEnum):
    """What the core did with a feedback click."""

    RECORDED = "recorded"  # this person's first vote on the answer
    CHANGED = "changed"  # the person's vote on the answer is now the other one
    UNCHANGED = "unchanged"  # the same vote again (a second click, a redelivery): nothing counted
    EXPIRED = "expired"  # unknown or too old an answer: nothing recorded
    REFUSED = "refused"  # the person is not on the platform's allow-lists: nothing recorded


class FeedbackOutcome(BaseModel):
    """The core's verdict on a feedback click, with a line ready for the person who clicked."""

    model_config = ConfigDict(frozen=True)

    status: FeedbackStatus
    vote: Vote | None = None  # the person's vote now (None when nothing was recorded)
    message: str = ""  # localized: a toast, an ephemeral line, a tap's answer

    @property
    def recorded(self) -> bool:
        """True when the person's vote stands as ``vote`` (new, changed or the same again)."""
        return self.status in (FeedbackStatus.RECORDED, FeedbackStatus.CHANGED, FeedbackStatus.UNCHANGED)
