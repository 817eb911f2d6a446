"""One bot id, one identity: a second deployment under the same bot id with another identity refuses."""

from __future__ import annotations

import logging
import os
import uuid

import pytest
from redis.asyncio import Redis

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES, GatewayConfig
from clarigate.gateway.runtime.identity import (
    IdentityClash,
    claim_identities,
    identity_key,
    platform_identities,
)
from clarigate.gateway.runtime.preflight import ExitCode

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
async def bot_id():
    """A fresh bot id; its identity record is deleted afterwards."""
    name = f"test-identity-{uuid.uuid4().hex[:10]}"
    yield name
    client = Redis.from_url(REDIS_URL)
    await client.delete(identity_key(name))
    await client.aclose()


async def test_the_first_identity_is_kept_and_another_is_refused(bot_id):
    first = GatewayConfig(
        bot_id=bot_id,
        telegram={"bot_token": "111:secret-of-bot-one"},
        feishu={"app_id": "cli_a", "app_secret": "s"},
    )
    other = GatewayConfig(bot_id=bot_id, telegram={"bot_token": "222:secret-of-bot-two"})
    assert await platform_identities(first) == {"feishu": "app cli_a", "telegram": "bot 111"}

    await claim_identities(REDIS_URL, bot_id, await platform_identities(first))
    await claim_identities(REDIS_URL, bot_id, {"telegram": "bot 111"})  # a restart: same identity
    with pytest.raises(IdentityClash) as clash:
        await claim_identities(REDIS_URL, bot_id, await platform_identities(other))
    message = str(clash.value)
    assert f"bot id {bot_id!r} already belongs to telegram bot 111" in message
    assert "this deployment is telegram bot 222" in message and "CLARIGATE_BOT_ID" in message
    assert "secret-of-bot-two" not in message and "secret-of-bot-one" not in message


def test_serve_refuses_a_second_identity_before_receiving(monkeypatch, capsys, bot_id, tmp_path):
    import asyncio

    asyncio.run(claim_identities(REDIS_URL, bot_id, {"telegram": "bot 111"}))
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    monkeypatch.setenv("CLARIGATE_BOT_ID", bot_id)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "222:the-other-bots-token")
    monkeypatch.setenv("TELEGRAM_API_URL", "http://127.0.0.1:9")  # never called: refused before
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.IDENTITY
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    err = capsys.readouterr().err
    assert "already belongs to telegram bot 111" in err and "telegram getMe" not in err
