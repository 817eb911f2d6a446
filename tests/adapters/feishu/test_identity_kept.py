"""The bot's open_id does not change for an app: once Feishu told it, the store (the tests' real
Redis) keeps it, under the bot's prefix and the app, and a restart uses it at once. A restart while
Feishu's open API withholds the identity (``bot/v3/info`` failing) still tells a mention of the bot
from a mention of someone else, and answers "@bot do X" in a group; Feishu is asked again in the
background all the same, and what it tells replaces what was kept.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from clarigate.adapters.feishu import FeishuAdapter, startup
from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.web.server import build_app
from tests.conftest import TEST_REDIS_URL, RedisStoreFactory, config_for_tests

from .cards import text_of
from .conftest import feishu_settings
from .events import TENANT, message_event, signed
from .fake_open_api import FakeOpenApi

INFO = "/bot/v3/info"
BOT = {"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "clarigate", "tenant_key": TENANT}
CAROL = {"key": "@_user_2", "id": {"open_id": "ou_carol"}, "name": "Carol", "tenant_key": TENANT}


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The identity asked again 0.1 s after a failure, at most 0.4 s apart (short for a test)."""
    monkeypatch.setattr(startup, "IDENTITY_RETRIES", RetryPolicy(first=0.1, cap=0.4))


@dataclass
class Replica:
    """One started gateway with the Feishu adapter in webhook mode, and a client to its app."""

    gateway: Gateway
    feishu: FeishuAdapter
    runner: ScriptedRunner
    http: httpx.AsyncClient

    async def deliver(self, event: dict[str, Any]) -> httpx.Response:
        body, headers = signed(event)
        return await self.http.post("/feishu/events", content=body, headers=headers)

    async def stop(self) -> None:
        await self.http.aclose()
        await self.gateway.stop(grace=0)


@pytest.fixture
async def start(redis_stores: RedisStoreFactory) -> AsyncIterator[Callable[..., Any]]:
    """``start(prefix, settings)``: a replica on the Redis prefix (a restart: the same prefix again)."""
    running: list[Replica] = []

    async def build(prefix: str, settings: FeishuSettings) -> Replica:
        runner = ScriptedRunner()
        gateway = Gateway(config_for_tests(), redis_stores(prefix), runner)
        gateway.register(feishu := FeishuAdapter(settings, gateway))
        await gateway.start()
        await feishu.startup.wait()  # the first answer about the bot's identity is in
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
        running.append(replica := Replica(gateway, feishu, runner, http))
        return replica

    yield build
    for replica in running:
        await replica.stop()


def in_group(text: str, *mentions: dict[str, Any]) -> dict[str, Any]:
    made = message_event("", chat="oc_team", chat_type="group")
    made["event"]["message"].update(content=json.dumps({"text": text}), mentions=list(mentions))
    return made


async def kept(prefix: str, app_id: str) -> Any:
    """What Redis holds for the app's bot open_id (a JSON string), read as an operator would."""
    client = Redis.from_url(TEST_REDIS_URL)
    try:
        raw = await client.get(f"{prefix}:state:feishu:bot_open_id:{app_id}")
    finally:
        await client.aclose()
    return None if raw is None else json.loads(raw)


async def test_a_restart_while_feishu_withholds_the_identity_uses_the_one_kept_before(
    start, fake_api: FakeOpenApi, caplog: pytest.LogCaptureFixture
):
    prefix, settings = f"test-kept-{uuid.uuid4().hex[:10]}", feishu_settings(fake_api)
    first = await start(prefix, settings)
    assert first.feishu.receiver.bot_open_id == "ou_bot"
    assert await kept(prefix, settings.app_id) == "ou_bot"
    await first.stop()

    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)  # Feishu's open API down at the restart
    with caplog.at_level(logging.INFO, logger="clarigate.adapters.feishu"):
        again = await start(prefix, settings)
        await asyncio.sleep(0.3)  # asked again meanwhile
    said = (await again.http.get("/readyz")).json()["degraded"]["feishu"]
    assert said.startswith("degraded (Feishu's open API does not answer:") and "kept" in said, said
    feishu = [r for r in caplog.records if r.name.startswith("clarigate.adapters.feishu")]
    warnings = [r.getMessage() for r in feishu if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "the one kept from an earlier start is used" in warnings[0], warnings

    to_bot = await again.deliver(in_group("@_user_1 deploy it", BOT, CAROL))
    to_carol = await again.deliver(in_group("@_user_2 can you check the backups?", CAROL))
    assert (to_bot.status_code, to_carol.status_code) == (200, 200)
    await again.gateway.drain()
    assert [c.text for c in again.runner.calls] == ["deploy it"]  # not Carol's
    assert "You said: deploy it" in text_of(fake_api.shown()[-1])


async def test_a_feishu_only_replica_with_a_kept_identity_stays_ready_while_feishus_api_is_down(
    start, fake_api: FakeOpenApi
):
    """A rolling restart during an outage of Feishu's open API (every call answered 503, the
    tenant token too): a replica serving Feishu alone, its bot's identity kept, stays in rotation,
    says Feishu's API does not answer, takes a group message and answers it once the API is back."""
    prefix, settings = f"test-kept-{uuid.uuid4().hex[:10]}", feishu_settings(fake_api)
    await (await start(prefix, settings)).stop()  # the identity learnt, and kept

    fake_api.fail_next(503, 1, times=10_000, path_part="/open-apis/")
    again = await start(prefix, settings)
    ready = await again.http.get("/readyz")
    assert ready.status_code == 200, ready.text
    said = ready.json()["degraded"]["feishu"]
    assert "Feishu's open API does not answer" in said and "kept" in said, said

    assert (await again.deliver(in_group("@_user_1 deploy it", BOT, CAROL))).status_code == 200
    fake_api.failures.clear()  # Feishu's API is back
    await again.gateway.drain()
    assert [c.text for c in again.runner.calls] == ["deploy it"]
    assert "You said: deploy it" in text_of(fake_api.shown()[-1])
    async with asyncio.timeout(5):
        while (await again.http.get("/readyz")).json() != {"status": "ready"}:  # noqa: ASYNC110
            await asyncio.sleep(0.05)


async def test_what_feishu_tells_replaces_an_open_id_kept_before(
    start, fake_api: FakeOpenApi, redis_stores: RedisStoreFactory, caplog: pytest.LogCaptureFixture
):
    prefix, settings = f"test-kept-{uuid.uuid4().hex[:10]}", feishu_settings(fake_api)
    await redis_stores(prefix).set_json(f"feishu:bot_open_id:{settings.app_id}", "ou_before", 3600)

    with caplog.at_level(logging.INFO, logger="clarigate.adapters.feishu"):
        replica = await start(prefix, settings)
    assert replica.feishu.receiver.bot_open_id == "ou_bot"
    assert await kept(prefix, settings.app_id) == "ou_bot"
    feishu = [r for r in caplog.records if r.name.startswith("clarigate.adapters.feishu")]
    [warning] = [r.getMessage() for r in feishu if r.levelno >= logging.WARNING]
    assert "another open_id" in warning and "Feishu's is used" in warning


async def test_an_open_id_kept_for_another_app_is_not_taken(start, fake_api, redis_stores: RedisStoreFactory):
    """One key per app: a bot prefix moved to another app (``admin identity --forget``) does not
    take the old app's bot for its own; a group mention is left for Feishu to push again."""
    prefix, settings = f"test-kept-{uuid.uuid4().hex[:10]}", feishu_settings(fake_api)
    await redis_stores(prefix).set_json("feishu:bot_open_id:cli_another_app", "ou_other_bot", 3600)
    fake_api.fail_next(500, 1, times=10_000, path_part=INFO)

    replica = await start(prefix, settings)
    assert replica.feishu.receiver.bot_open_id is None
    assert (await replica.deliver(in_group("@_user_1 deploy it", BOT))).status_code == 503
