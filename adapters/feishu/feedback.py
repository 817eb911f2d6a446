"""👍/👎 under a final answer on Feishu: two callback buttons at the foot of the answer's card.

A posted answer carries them in its (last) card. A streamed answer gets them once its stream is
over: the live card's streaming mode is switched off and the whole answer set (``_settle``), then
the buttons are appended as a component of the card entity (CardKit's "add elements",
``POST /cardkit/v1/cards/:card_id/elements``, with a ``uuid`` so a repeated delivery appends them
once). While ``streaming_mode`` is on Feishu does not apply a callback's card update at once, so
nothing is added to, or answered on, a card that still streams.

A click's value is ``{"t": token, "a": "v+" | "v-", "l": locale}`` (the token is the answer's,
``FeedbackAsk.token``); it is answered with a toast only (the card stays as it is: everyone in
the chat sees the same buttons), after the core kept the person's one vote.
"""

from __future__ import annotations

from typing import Any

from clarigate.gateway.boundary.messages import FeedbackAsk, InboundFeedback, MessageRef, Sender, Vote
from clarigate.gateway.boundary.port import GatewayPort

from .render import Card, button, button_row
from .send import FeishuSender

#: The component the buttons are appended as (its element_id in a card entity).
FEEDBACK_ELEMENT = "feedback"
#: The vote each button's action stands for.
VOTES: dict[str, Vote] = {"v+": "up", "v-": "down"}


def feedback_row(ask: FeedbackAsk) -> dict[str, Any]:
    """The two buttons, side by side."""
    up = button("👍", ask.token, "v+", locale=ask.locale)
    down = button("👎", ask.token, "v-", locale=ask.locale)
    return {**button_row([up, down]), "element_id": FEEDBACK_ELEMENT}


def with_feedback(card: Card, ask: FeedbackAsk | None) -> Card:
    """``card`` with the buttons at its foot (``ask`` None: the card as it is)."""
    if ask is None:
        return card
    body = card.get("body", {})
    return {**card, "body": {**body, "elements": [*body.get("elements", []), feedback_row(ask)]}}


async def append_votes(sender: FeishuSender, ref: MessageRef, ask: FeedbackAsk, key: str | None) -> None:
    """Append the buttons to a streamed card entity whose stream is over (``ref``: the live
    message, its card_id and creation time kept); once per delivery (``key``)."""
    card_id, created = ref.extra["card_id"], int(ref.extra["created_ms"])
    once = f"{key}:{FEEDBACK_ELEMENT}" if key else None
    await sender.append_elements(card_id, created, [feedback_row(ask)], once)


def vote_of(value: Any) -> Vote | None:
    """The vote a callback value carries, or None when it is no feedback button's."""
    return VOTES.get(str(value.get("a", ""))) if isinstance(value, dict) else None


async def record_vote(
    gateway: GatewayPort, value: dict[str, Any], sender: Sender, event_id: str
) -> dict[str, Any]:
    """Hand the click to the core; the toast that answers it."""
    vote = vote_of(value)
    if vote is None:  # not a feedback button's value: the caller asked ``vote_of`` first
        return {}
    token, language = str(value.get("t", "")), str(value.get("l") or "") or None
    feedback = InboundFeedback(sender=sender, token=token, vote=vote, event_id=event_id, language=language)
    outcome = await gateway.submit_feedback(feedback)
    kind = "success" if outcome.recorded else "warning"
    return {"toast": {"type": kind, "content": outcome.message}}
