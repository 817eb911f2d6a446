"""Fixtures: the fake Slack Web API, the real core with a scripted agent, a signed-request Slack user."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.slack.settings import SlackSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runners.base import AgentRunner
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app

from .fake_slack import BOT_TOKEN, FakeSlack
from .slack_user import SIGNING_SECRET, SlackUser


@pytest.fixture
async def fake_slack() -> AsyncIterator[FakeSlack]:
    """A fake Slack Web API on a random port of 127.0.0.1."""
    server = FakeSlack()
    await server.start()
    yield server
    await server.stop()


def slack_settings(fake: FakeSlack, **extra: Any) -> SlackSettings:
    """Settings pointing the adapter at the fake server."""
    values: dict[str, Any] = {
        "bot_token": SecretStr(BOT_TOKEN),
        "signing_secret": SecretStr(SIGNING_SECRET),
        "api_url": fake.api_url,
    }
    return SlackSettings(**{**values, **extra})


@dataclass
class SlackWorld:
    """The gateway, its Slack adapter, the fake Slack and a user who talks to the bot."""

    gateway: Gateway
    adapter: SlackAdapter
    fake: FakeSlack
    user: SlackUser
    runner: Any

    async def settle(self) -> None:
        """Wait until every accepted message and answer has had its reply (and clicks their updates)."""
        await self.adapter.idle()
        await self.gateway.drain(timeout=20)


MakeWorld = Callable[..., Awaitable[SlackWorld]]


@pytest.fixture
async def make_world(fake_slack: FakeSlack) -> AsyncIterator[MakeWorld]:
    """Build the whole bot (real core, in-memory store, given runner) talking to the fake Slack."""
    worlds: list[SlackWorld] = []
    clients: list[httpx.AsyncClient] = []

    async def make(runner: AgentRunner | None = None, store: Any = None, **config: Any) -> SlackWorld:
        runner = runner or ScriptedRunner()
        store = store or MemoryStore(f"test-{uuid.uuid4().hex[:12]}")
        config.setdefault("progress_after_seconds", 0.0)  # "working…" around even instant runs
        gateway = Gateway(GatewayConfig(**config), store, runner)
        # the slack section (``slack={"agent_view": True}``) is the core's and the adapter's
        adapter = SlackAdapter(slack_settings(fake_slack, **config.get("slack", {})), gateway)
        gateway.register(adapter)
        await gateway.start(workers=2)
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gateway"
        )
        clients.append(http)
        world = SlackWorld(gateway, adapter, fake_slack, SlackUser(http, fake_slack), runner)
        worlds.append(world)
        return world

    yield make
    for http in clients:
        await http.aclose()
    for world in worlds:
        await world.gateway.stop(grace=1)
