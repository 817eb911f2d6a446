"""A member leaving a channel, or removed from it: ``member_left_channel``.

The core closes the open questions only they may answer there (``GatewayPort.member_left``), as
their Cancel would, so the channel's threads are not held up by them until they expire. Slack sends
the event to an app subscribed to it (the manifest), with ``channels:read`` (public channels) or
``groups:read`` (private ones).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from clarigate.gateway.boundary.messages import Conversation, Sender
from clarigate.gateway.boundary.port import GatewayPort

PLATFORM = "slack"


def on_member_left(gateway: GatewayPort) -> Callable[[dict[str, Any]], Awaitable[None]]:
    """The Bolt listener of ``member_left_channel`` (``{"user", "channel", "channel_type",
    "team"}``): the channel known, as a message's conversation is, by the team and its id."""

    async def member_left(body: dict[str, Any]) -> None:
        event = body.get("event")
        event = event if isinstance(event, dict) else {}
        user, channel = event.get("user"), event.get("channel")
        if not (isinstance(user, str) and user and isinstance(channel, str) and channel):
            return
        workspace = str(body.get("team_id") or event.get("team") or "")
        conversation = Conversation(platform=PLATFORM, workspace=workspace, chat_id=channel)
        await gateway.member_left(conversation, Sender(user_id=user))

    return member_left
