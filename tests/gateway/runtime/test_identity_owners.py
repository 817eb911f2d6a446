"""One identity, one bot id: a platform identity already claimed by another bot id on the same
Redis (a copied deployment directory with its secrets) is refused as the reverse of "one bot id,
one identity" is, and an identity can move to a new bot id on purpose."""

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
    OWNERS_KEY,
    IdentityClash,
    claim_identities,
    identity_key,
    platform_identities,
)
from clarigate.gateway.runtime.preflight import ExitCode
from tests.adapters.telegram.fake_bot_api import FakeBotApi

REDIS_URL = "redis://127.0.0.1:6379/13"


@pytest.fixture
async def bot_ids():
    """Two fresh bot ids (alpha and its copy delta); their records are deleted afterwards."""
    names = [f"test-owner-{uuid.uuid4().hex[:10]}" for _ in range(2)]
    yield names
    client = Redis.from_url(REDIS_URL)
    await client.delete(*(identity_key(name) for name in names))
    claims = await client.hgetall(OWNERS_KEY)
    ours = [field for field, value in claims.items() if json.loads(value)["bot_id"] in names]
    if ours:
        await client.hdel(OWNERS_KEY, *ours)
    await client.aclose()


def environment(monkeypatch, tmp_path, bot_id: str, token: str, api_url: str) -> None:
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    monkeypatch.setenv("CLARIGATE_BOT_ID", bot_id)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", token)
    monkeypatch.setenv("TELEGRAM_API_URL", api_url)


def run_main(args: list[str]) -> int:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        return main(args)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)


async def test_an_identity_claimed_by_another_bot_id_is_refused_and_nothing_recorded(bot_ids):
    alpha, delta = bot_ids
    configs = [GatewayConfig(bot_id=b, telegram={"bot_token": "111:same-secret"}) for b in bot_ids]
    await claim_identities(REDIS_URL, alpha, await platform_identities(configs[0]))
    await claim_identities(REDIS_URL, alpha, {"telegram": "bot 111"})  # a restart of alpha

    with pytest.raises(IdentityClash) as clash:
        await claim_identities(REDIS_URL, delta, await platform_identities(configs[1]))

    message = str(clash.value)
    assert f"telegram bot 111 already belongs to bot id {alpha!r}" in message, message
    assert f"as bot id {delta!r}" in message and "\n" not in message and "same-secret" not in message
    assert f"`clarigate admin identity --forget telegram` with CLARIGATE_BOT_ID={alpha}" in message
    client = Redis.from_url(REDIS_URL)
    try:
        assert await client.hgetall(identity_key(delta)) == {}  # refused: nothing recorded for delta
        owner = json.loads(await client.hget(OWNERS_KEY, "telegram bot 111"))
        assert owner["bot_id"] == alpha
    finally:
        await client.aclose()


async def test_two_first_starts_of_one_identity_under_two_bot_ids_cannot_both_win(bot_ids):
    claims = [claim_identities(REDIS_URL, b, {"slack": "team T1 bot user U1"}) for b in bot_ids]
    results = await asyncio.gather(*claims, return_exceptions=True)
    assert sorted(type(r).__name__ for r in results) == ["IdentityClash", "NoneType"]


async def test_forgetting_on_the_old_bot_id_lets_the_identity_move(bot_ids, monkeypatch, tmp_path, capsys):
    alpha, delta = bot_ids
    await claim_identities(REDIS_URL, alpha, {"telegram": "bot 111"})
    environment(monkeypatch, tmp_path, alpha, "111:same-secret", "http://127.0.0.1:9")
    code = await asyncio.to_thread(run_main, ["admin", "identity", "--forget", "telegram", "--yes"])
    assert code == 0, capsys.readouterr()

    await claim_identities(REDIS_URL, delta, {"telegram": "bot 111"})  # moved: delta's now
    with pytest.raises(IdentityClash, match=f"already belongs to bot id {delta!r}"):
        await claim_identities(REDIS_URL, alpha, {"telegram": "bot 111"})


def test_serve_refuses_a_copied_deployment_with_exit_9(monkeypatch, capsys, bot_ids, tmp_path):
    alpha, delta = bot_ids
    asyncio.run(claim_identities(REDIS_URL, alpha, {"telegram": "bot 111"}))
    environment(monkeypatch, tmp_path, delta, "111:the-copied-token", "http://127.0.0.1:9")

    assert run_main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.IDENTITY == 9

    err = capsys.readouterr().err
    assert f"telegram bot 111 already belongs to bot id {alpha!r}" in err and "the-copied-token" not in err


async def test_doctor_names_the_bot_id_that_holds_this_identity(monkeypatch, capsys, bot_ids, tmp_path):
    alpha, delta = bot_ids
    api = FakeBotApi()
    await api.start()
    try:
        await claim_identities(REDIS_URL, alpha, {"telegram": "bot 123456"})
        environment(monkeypatch, tmp_path, delta, api.token, api.base_url)
        code = await asyncio.to_thread(run_main, ["doctor"])
        with pytest.raises(IdentityClash) as serve_says:
            await claim_identities(REDIS_URL, delta, {"telegram": "bot 123456"})
    finally:
        await api.stop()
    out = capsys.readouterr().out
    assert code == 1, out
    assert f"PROBLEM identity: {serve_says.value}" in out.splitlines(), out
    assert out.rstrip().endswith("1 problem(s) found")


async def test_a_redis_user_closed_to_the_shared_hash_still_starts_with_its_own_check(bot_ids, caplog):
    """An ACL user made from the rules before the shared hash (``~mybot:*`` only) gets NOPERM on
    it: the start goes on with this bot id's own check, and says once what is not checked."""
    alpha, _ = bot_ids
    raw = Redis.from_url(REDIS_URL)
    user = f"clarigate-test-{uuid.uuid4().hex[:10]}"
    rules = ["on", ">pw", "resetkeys", f"~{alpha}:*", "-@all", "+ping", "+select", "+hget", "+hsetnx"]
    await raw.execute_command("ACL", "SETUSER", user, *rules, "+evalsha", "+script|load", "+eval")
    url = f"redis://{user}:pw@127.0.0.1:6379/13"
    try:
        with caplog.at_level(logging.WARNING, logger="clarigate.gateway.runtime.identity"):
            await claim_identities(url, alpha, {"telegram": "bot 111"})
            with pytest.raises(IdentityClash):  # its own record still holds it
                await claim_identities(url, alpha, {"telegram": "bot 222"})
        said = [r.getMessage() for r in caplog.records]
        assert said and all(OWNERS_KEY in line for line in said), said
        assert await raw.hget(OWNERS_KEY, "telegram bot 111") is None
    finally:
        await raw.execute_command("ACL", "DELUSER", user)
        await raw.aclose()
