"""A replica serving Feishu (and Telegram beside it) for readiness tests: its gateway, its Feishu
adapter and an HTTP client to its app, made by ``replicas`` and stopped when the test ends."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.base import Store
from clarigate.gateway.web.server import build_app
from tests.adapters.telegram.fake_bot_api import FakeBotApi
from tests.adapters.telegram.harness import telegram_settings
from tests.conftest import config_for_tests

from .conftest import feishu_settings
from .fake_open_api import FakeOpenApi


@dataclass
class Replica:
    """One gateway serving the given platforms, and an HTTP client to its ASGI app."""

    gateway: Gateway
    feishu: FeishuAdapter
    http: httpx.AsyncClient

    async def ready(self) -> httpx.Response:
        return await self.http.get("/readyz")


@asynccontextmanager
async def replicas(
    fake_api: FakeOpenApi, bot_api: FakeBotApi, store: Callable[[], Store], **settings: Any
) -> AsyncIterator[Callable[..., Awaitable[Replica]]]:
    """Makes replicas on ``store()`` with Feishu's ``settings`` (each call may add more), Telegram
    beside it unless ``telegram=False``; once the first answer about the bot's identity is in."""
    made: list[Replica] = []

    async def build(telegram: bool = True, **more: Any) -> Replica:
        gateway = Gateway(config_for_tests(), store(), ScriptedRunner())
        feishu = FeishuAdapter(feishu_settings(fake_api, **{**settings, **more}), gateway)
        gateway.register(feishu)
        if telegram:
            gateway.register(TelegramAdapter(telegram_settings(bot_api), gateway))
        await gateway.start()
        await feishu.startup.wait()
        http = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
        made.append(replica := Replica(gateway, feishu, http))
        return replica

    try:
        yield build
    finally:
        for replica in made:
            await replica.http.aclose()
            await replica.gateway.stop(grace=0)
