"""Slash commands typed where the bot is not a member: answered through their ``response_url``.

``/clarigate status`` works in any DM, also one between two other people, where the bot
cannot post (``chat.postMessage`` answers ``channel_not_found``). The command's
``response_url`` (valid for 30 minutes, five uses) is kept in the shared state when the command
arrives, under the delivery ids of the command's replies, so whichever replica delivers a reply
answers through the URL of the command it answers, seen by the person who typed it only (two
people of one DM typing commands at once each get their own answer).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from clarigate.gateway.boundary.messages import InboundMessage
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.flow.delivery import delivery_id

#: Slack keeps a response_url for 30 minutes; a minute less, so a kept one still works.
RESPONSE_URL_SECONDS = 29 * 60
#: What chat.postMessage answers where the bot is not a member.
NOT_A_MEMBER = frozenset({"channel_not_found", "not_in_channel"})
SLACK_HOOK_HOST = "hooks.slack.com"
#: The items of a command's job its URL is kept for: one answers it, a second is spare.
COMMAND_REPLIES = 2


def _key(delivery: str) -> str:
    return f"slack:response-url:{delivery}"


def may_respond(url: str, api_url: str) -> bool:
    """``url`` is Slack's own (https on hooks.slack.com), or the API's host (a test server):
    the bot never posts a reply to an address a payload merely names."""
    parts, api = urlsplit(url), urlsplit(api_url)
    host = (parts.hostname or "").lower()
    if host and host == (api.hostname or "").lower() and parts.port == api.port:
        return parts.scheme in ("http", "https")
    return parts.scheme == "https" and host == SLACK_HOOK_HOST


async def remember(state: Any, body: dict[str, Any], command: InboundMessage, api_url: str) -> None:
    """Keep a DM command's ``response_url`` for its replies (nothing when it is not Slack's)."""
    url = str(body.get("response_url") or "")
    if state is not None and url and may_respond(url, api_url):
        for index in range(COMMAND_REPLIES):
            await state.set_json(_key(delivery_id(command.inbound_id, index)), url, RESPONSE_URL_SECONDS)


async def kept_url(state: Any, delivery: str | None, error: DeliveryFailed) -> str | None:
    """The response_url of the command a reply (by its delivery id) answers, when its post was
    refused for want of membership."""
    if state is None or not delivery or error.code not in NOT_A_MEMBER:
        return None
    url = await state.get_json(_key(delivery))
    return url if isinstance(url, str) else None
