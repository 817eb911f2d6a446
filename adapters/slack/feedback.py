"""👍/👎 under a final answer on Slack: a ``context_actions`` block with ``feedback_buttons``.

Slack's own feedback control for AI answers. Each button's value is the answer's token and the
vote (``button_value``); a click arrives as ``block_actions`` with the clicked button's value,
is acked at once and handed to the core (``GatewayPort.submit_feedback``), which keeps one vote
per person and answer. Slack shows the person which button they chose; a click on an answer too
old to rate is told to that person only (an ephemeral message).

The answer's text sits in section blocks above the control (a message with blocks shows the
blocks, its ``text`` being the notification): one section per ``SECTION_LIMIT`` characters.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.context.ack.async_ack import AsyncAck
from slack_sdk.models.blocks import ContextActionsBlock, MarkdownTextObject, SectionBlock
from slack_sdk.models.blocks.basic_components import FeedbackButtonObject, PlainTextObject
from slack_sdk.models.blocks.block_elements import FeedbackButtonsElement

from clarigate.agent.protocol import ui_text
from clarigate.gateway.boundary.messages import FeedbackAsk, FeedbackStatus, InboundFeedback, Vote
from clarigate.gateway.boundary.port import DeliveryFailed, GatewayPort

from .markup import split_mrkdwn
from .receive import interaction_id, interaction_sender
from .render import SECTION_LIMIT, button_value, parse_button_value
from .send import SlackSender

log = logging.getLogger(__name__)

#: The action id of the feedback control (outside ``ACTION_PREFIX``: no question behind it).
FEEDBACK_ACTION = "clarigate_feedback"
#: The vote each button's value carries.
VOTES: dict[str, Vote] = {"up": "up", "down": "down"}


def feedback_blocks(mrkdwn: str, ask: FeedbackAsk) -> list[dict[str, Any]]:
    """The last part of an answer (escaped mrkdwn) as section blocks, then 👍/👎 under it."""
    sections = [
        SectionBlock(text=MarkdownTextObject(text=chunk)).to_dict()
        for chunk in split_mrkdwn(mrkdwn, SECTION_LIMIT)
    ]

    def button(vote: str, icon: str) -> FeedbackButtonObject:
        label = ui_text(f"feedback_{vote}", ask.locale)
        return FeedbackButtonObject(
            text=PlainTextObject(text=icon), accessibility_label=label, value=button_value(ask.token, vote)
        )

    control = FeedbackButtonsElement(
        action_id=FEEDBACK_ACTION, positive_button=button("up", "👍"), negative_button=button("down", "👎")
    )
    return [*sections, ContextActionsBlock(elements=[control]).to_dict()]


class FeedbackClicks:
    """The Bolt listener for clicks on the feedback control."""

    def __init__(self, gateway: GatewayPort, sender: SlackSender) -> None:
        self.gateway = gateway
        self.sender = sender

    async def on_click(self, ack: AsyncAck, body: dict[str, Any]) -> None:
        """Ack, then record the vote; an answer too old to rate is told to the person only."""
        await ack()
        action = (body.get("actions") or [{}])[0]
        parsed = parse_button_value(action.get("value"))
        if parsed is None or parsed[1] not in VOTES:
            return
        token, vote = parsed
        person = interaction_sender(body)
        feedback = InboundFeedback(
            sender=person, token=token, vote=VOTES[vote], event_id=interaction_id(body)
        )
        outcome = await self.gateway.submit_feedback(feedback)
        if outcome.status is not FeedbackStatus.EXPIRED:
            return
        channel = (body.get("channel") or {}).get("id") or (body.get("container") or {}).get("channel_id")
        thread = (body.get("message") or {}).get("thread_ts")
        if channel:
            try:
                await self.sender.ephemeral(channel, person.user_id, outcome.message, thread)
            except DeliveryFailed as error:
                log.info("slack: the feedback note was not shown: %s", error.code)
