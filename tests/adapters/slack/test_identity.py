"""The Slack identity recorded under the bot id: the team and the bot user from ``auth.test``."""

from __future__ import annotations

from gateway.config import GatewayConfig
from gateway.identity import platform_identities

from .conftest import slack_settings
from .fake_slack import FakeSlack


async def test_the_slack_identity_is_the_team_and_bot_user(fake_slack: FakeSlack):
    config = GatewayConfig(slack=slack_settings(fake_slack))
    assert await platform_identities(config) == {"slack": "team T0TEAM bot user U0BOT"}
    fake_slack.valid_tokens.clear()  # a rejected token: no identity, the adapter's start says why
    assert await platform_identities(config) == {}
