"""The Slack identity recorded under the bot id (team and bot user), and the Socket Mode connection state."""

from __future__ import annotations

from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.identity import platform_identities

from .conftest import slack_settings
from .fake_slack import FakeSlack


async def test_the_slack_identity_is_the_team_and_bot_user(fake_slack: FakeSlack):
    config = GatewayConfig(slack=slack_settings(fake_slack))
    assert await platform_identities(config) == {"slack": "team T0TEAM bot user U0BOT"}
    fake_slack.valid_tokens.clear()  # a rejected token: no identity, the adapter's start says why
    assert await platform_identities(config) == {}


async def test_socket_mode_connection_is_reported(fake_slack: FakeSlack):
    import uuid

    from pydantic import SecretStr

    from clarigate.adapters.slack import SlackAdapter
    from clarigate.adapters.testing import ScriptedRunner
    from clarigate.gateway.flow.intake import Gateway
    from clarigate.gateway.store.memory import MemoryStore

    from .fake_slack import APP_TOKEN

    gateway = Gateway(GatewayConfig(), MemoryStore(f"t-{uuid.uuid4().hex[:8]}"), ScriptedRunner())
    adapter = SlackAdapter(
        slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None), gateway
    )
    assert await SlackAdapter(slack_settings(fake_slack), gateway).connection_up() is None  # HTTP mode
    gateway.register(adapter)
    await gateway.start(workers=1)
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        assert await adapter.connection_up() is True
    finally:
        await gateway.stop(grace=0)
    assert await adapter.connection_up() is None  # stopped: no socket held
