"""One bot id, one identity: a second deployment under the same bot id with another identity refuses."""

from __future__ import annotations

import asyncio
import json
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
from tests.adapters.telegram.fake_bot_api import FakeBotApi

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


@pytest.fixture
async def telegram_bot(monkeypatch, bot_id, tmp_path):
    """An operator's environment for this deployment's Telegram bot (123456, on the fake Bot API,
    which accepts its token) under ``bot_id``."""
    api = FakeBotApi()
    await api.start()
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    monkeypatch.setenv("CLARIGATE_BOT_ID", bot_id)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", api.token)
    monkeypatch.setenv("TELEGRAM_API_URL", api.base_url)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield api
    await api.stop()
    root.handlers[:] = handlers
    root.setLevel(level)


async def recorded_under(bot_id: str) -> dict[bytes, bytes]:
    client = Redis.from_url(REDIS_URL)
    try:
        return await client.hgetall(identity_key(bot_id))
    finally:
        await client.aclose()


async def test_doctor_names_a_bot_id_that_belongs_to_another_bot_in_serves_words(
    capsys, bot_id, telegram_bot
):
    """The bot id was first used by Telegram bot 999 (another team's bot, or a copied .env): what
    stops ``serve`` with exit 9 is a PROBLEM for doctor, not "everything looks right"."""
    client = Redis.from_url(REDIS_URL)
    await client.hset(identity_key(bot_id), "telegram", json.dumps({"who": "bot 999", "since": 1}))
    await client.aclose()

    code = await asyncio.to_thread(main, ["doctor"])  # its own event loop, as from a shell

    with pytest.raises(IdentityClash) as serve_says:  # serve's check at start, as bot 123456
        await claim_identities(REDIS_URL, bot_id, {"telegram": "bot 123456"})
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"PROBLEM identity: {serve_says.value}" in out.splitlines()
    assert "already belongs to telegram bot 999" in out and "admin identity --forget telegram" in out
    assert "ok      telegram: credentials accepted" in out and out.rstrip().endswith("1 problem(s) found")
    assert telegram_bot.token.split(":")[1] not in out
    recorded = await recorded_under(bot_id)
    assert list(recorded) == [b"telegram"] and json.loads(recorded[b"telegram"])["who"] == "bot 999"


async def test_doctor_records_no_identity(capsys, bot_id, telegram_bot):
    """The first ``serve`` records the bot's identity; a doctor before it does not (nor complains)."""
    assert await asyncio.to_thread(main, ["doctor"]) == 0, capsys.readouterr().out
    assert await recorded_under(bot_id) == {}
