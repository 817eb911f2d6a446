"""The Bolt ``AsyncApp`` the Slack adapter receives through, on the adapter's own Web API client.

Bolt's own authorization for a single workspace asks Slack (``auth.test``) on the first request
it sees: the first event of every process waited for Slack before its ack, and one arriving while
Slack's Web API was unreachable was answered 500, logged as our bug. The bot's identity is had
at start instead (``adapter.start``: ``auth.test`` by the start-up retries) and handed to Bolt
from there (``BotIdentity``): no request calls Slack before its ack.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.async_authorize import AsyncAuthorize
from slack_bolt.context.async_context import AsyncBoltContext
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped, warning_token_skipped
from slack_bolt.request.async_request import AsyncBoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.web.async_client import AsyncWebClient

log = logging.getLogger(__name__)

#: The body of the 503 for a request that came before the bot's identity was known.
NOT_SIGNED_IN = "not ready: the bot's identity is not known yet"


class BotIdentity(AsyncAuthorize):
    """Bolt's ``authorize``: the bot's team, user and bot id from the start's ``auth.test``
    (``signed_in``), with the bot token; what Bolt tells the bot's own messages and mentions by."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token
        self.identity: Mapping[str, Any] | None = None

    def signed_in(self, identity: Mapping[str, Any]) -> None:
        """The bot's ``auth.test`` answer, had at start."""
        self.identity = identity

    async def __call__(
        self,
        *,
        context: AsyncBoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult:
        """What Bolt's single-workspace authorization makes of ``auth.test``, without the call."""
        if self.identity is None:  # not reached: ``until_signed_in`` answered 503 before
            raise RuntimeError("the bot's identity is asked for before the start had it")
        return AuthorizeResult(
            enterprise_id=self.identity.get("enterprise_id"),
            team_id=self.identity.get("team_id"),
            team=self.identity.get("team"),
            url=self.identity.get("url"),
            bot_id=self.identity.get("bot_id"),
            bot_user_id=self.identity.get("user_id"),
            bot_token=self.token,
            user_id=user_id,
        )

    async def until_signed_in(
        self, req: AsyncBoltRequest, next: Callable[[], Awaitable[None]]
    ) -> BoltResponse | None:
        """Bolt middleware before ``authorize``: a request that comes before the start knew the
        identity (the bot's own messages and its mentions cannot be told) is answered 503, and
        Slack sends it again; nothing is asked of Slack on the ack path."""
        if self.identity is not None:
            await next()
            return None
        log.warning(
            "slack: a %s came before the bot's identity was known: answered 503", req.body.get("type")
        )
        return BoltResponse(status=503, body=NOT_SIGNED_IN)


def build_bolt_app(client: AsyncWebClient, signing_secret: str, identity: BotIdentity) -> AsyncApp:
    """Bolt with ``client``: work before ack (an exception answers 500: Slack redelivers), and
    unhandled requests raised for the adapter's error handler (200 and a count, not Bolt's 404);
    the bot's identity from ``identity`` (no ``auth.test`` on the ack path).

    Given no ``token``, Bolt reads ``SLACK_BOT_TOKEN`` itself, then warns that ``client`` wins over
    it, and given ``authorize``, that the client's token goes unused: the token set as documented
    is used, through ``identity``. Those two lines about nothing, logged while the app is built,
    are dropped; Bolt's other lines are not.
    """
    framework = logging.getLogger(f"slack_bolt.{AsyncApp.__name__}")  # Bolt's get_bolt_logger(AsyncApp)
    unused_token = {warning_client_prioritized_and_token_skipped(), warning_token_skipped()}

    def keep(record: logging.LogRecord) -> bool:
        return record.getMessage() not in unused_token

    framework.addFilter(keep)
    try:
        return AsyncApp(
            client=client,
            signing_secret=signing_secret,
            authorize=identity,
            before_authorize=identity.until_signed_in,
            process_before_response=True,
            raise_error_for_unhandled_request=True,
            # Bolt logs under its app name and sets that logger's level by assignment: a name
            # outside the package's own logger tree keeps ours untouched
            name="clarigate-slack",
        )
    finally:
        framework.removeFilter(keep)
