"""A Feishu bot under test: the real core and adapter, a fake open API, signed HTTP events."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from redis.asyncio import Redis

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore
from clarigate.gateway.web.server import build_app

from .events import ENCRYPT_KEY, VERIFICATION_TOKEN, signed
from .fake_open_api import FakeOpenApi

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
def fake_api() -> Iterator[FakeOpenApi]:
    """The fake Feishu open API, serving on a free loopback port."""
    api = FakeOpenApi().start()
    yield api
    api.close()


def feishu_settings(api: FakeOpenApi, **overrides: Any) -> FeishuSettings:
    """Settings pointing the adapter at the fake API (a fresh app id: the SDK caches tokens by app)."""
    values: dict[str, Any] = {
        "app_id": f"cli_{uuid.uuid4().hex[:10]}",
        "app_secret": SecretStr("secret"),
        "verification_token": SecretStr(VERIFICATION_TOKEN),
        "encrypt_key": SecretStr(ENCRYPT_KEY),
        "domain": api.url,
    }
    values.update(overrides)
    return FeishuSettings(**values)


@dataclass
class FeishuBot:
    """The gateway with the Feishu adapter, and an HTTP client that talks to its webhook."""

    gateway: Gateway
    adapter: FeishuAdapter
    runner: ScriptedRunner
    api: FakeOpenApi
    http: httpx.AsyncClient

    async def deliver(self, payload: dict[str, Any], **signing: Any) -> httpx.Response:
        """POST an event to ``/feishu/events``, encrypted and signed as Feishu does."""
        body, headers = signed(payload, **signing)
        return await self.http.post("/feishu/events", content=body, headers=headers)

    async def click(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Deliver a card callback; returns its reply (toast, card)."""
        response = await self.deliver(payload)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    """Both stores, under a prefix no other test uses; Redis keys are deleted afterwards."""
    prefix = f"test-feishu-{uuid.uuid4().hex[:12]}"
    if request.param == "memory":
        yield MemoryStore(prefix)
        return
    redis_store = RedisStore(REDIS_URL, prefix)
    try:
        yield redis_store
    finally:
        await redis_store.close()
        client = Redis.from_url(REDIS_URL)
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
        if keys:
            await client.delete(*keys)
        await client.aclose()


@pytest.fixture
async def make_bot(fake_api: FakeOpenApi, store: Store) -> AsyncIterator[Any]:
    """Build started bots around a ``ScriptedRunner`` (``settings``: Feishu settings other than the
    tests' usual ones); stopped afterwards."""
    built: list[FeishuBot] = []

    async def build(
        runner: ScriptedRunner | None = None, settings: dict[str, Any] | None = None, **config: Any
    ) -> FeishuBot:
        app = feishu_settings(fake_api, **(settings or {}))
        values: dict[str, Any] = {
            "workers": 2,
            "stale_claim_seconds": 0.3,
            "shutdown_grace_seconds": 1.0,
            "progress_after_seconds": 0.0,  # "working…" around even instant runs
        }
        values.update(config)
        gateway = Gateway(GatewayConfig(**values), store, runner or ScriptedRunner())
        adapter = FeishuAdapter(app, gateway)
        gateway.register(adapter)
        await gateway.start()
        await adapter.startup.wait()  # the client built, the bot's identity learnt (in the background)
        app = build_app(gateway)  # the server as in production: its guard answers what the route raises
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://gateway")
        bot = FeishuBot(gateway, adapter, gateway.runner, fake_api, http)  # type: ignore[arg-type]
        built.append(bot)
        return bot

    yield build
    for bot in built:
        await bot.http.aclose()
        await bot.gateway.stop(grace=0)
