"""Feishu still starting (its open API failing or out of reach at start: the bot's identity asked
again with backoff for as long as it takes) on a replica that serves Telegram too must not take the
replica out of the load balancer's rotation: ``/readyz`` stays 200 while another platform works,
saying Feishu is still starting and why, and Telegram's webhooks are answered meanwhile. With Feishu
alone the replica is not ready until Feishu is. The store is the tests' real Redis.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from clarigate.adapters.feishu import startup
from clarigate.gateway.boundary.retry import RetryPolicy
from tests.adapters.telegram.fake_bot_api import FakeBotApi
from tests.adapters.telegram.harness import SECRET as TELEGRAM_SECRET
from tests.adapters.telegram.harness import message_update
from tests.conftest import RedisStoreFactory

from .fake_open_api import FakeOpenApi
from .replicas import replicas

INFO = "/bot/v3/info"


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """The identity asked again 0.1 s after a failure, at most 0.4 s apart (short for a test)."""
    monkeypatch.setattr(startup, "IDENTITY_RETRIES", RetryPolicy(first=0.1, cap=0.4))


@pytest.fixture
async def make_replica(
    fake_api: FakeOpenApi, bot_api: FakeBotApi, redis_stores: RedisStoreFactory
) -> AsyncIterator[Callable[..., Any]]:
    async with replicas(fake_api, bot_api, redis_stores) as build:
        yield build


def feishu_out_of_reach(outage: str, fake_api: FakeOpenApi, port: int) -> dict[str, Any]:
    """Feishu's open API answering 5xx, or nothing listening where it is looked for: the settings."""
    if outage == "a 5xx":
        fake_api.fail_next(500, 1, times=10_000, path_part=INFO)
        return {}
    return {"domain": f"http://127.0.0.1:{port}"}


@pytest.mark.parametrize("outage", ["a 5xx", "the network"])
async def test_feishu_still_starting_leaves_the_replica_ready_for_telegram(
    make_replica, fake_api, bot_api, unused_tcp_port, outage
):
    replica = await make_replica(**feishu_out_of_reach(outage, fake_api, unused_tcp_port))
    await asyncio.sleep(0.5)  # asked again meanwhile: still starting

    response = await replica.ready()
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready" and list(body) == ["status", "starting"], body
    assert body["starting"]["feishu"].startswith("starting (the bot's identity is not known yet"), body

    update = message_update("hello from telegram")
    headers = {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
    assert (await replica.http.post("/telegram/webhook", json=update, headers=headers)).status_code == 200
    await replica.gateway.drain()
    assert "hello from telegram" in bot_api.of("sendMessage")[-1].params["text"]


async def test_once_feishu_answers_it_is_no_longer_named_and_one_line_says_so(make_replica, fake_api, caplog):
    replica = await make_replica(**feishu_out_of_reach("a 5xx", fake_api, 0))
    assert "feishu" in (await replica.ready()).json()["starting"]

    with caplog.at_level(logging.INFO, logger="clarigate.adapters.feishu"):
        fake_api.failures.clear()
        async with asyncio.timeout(5):
            while (await replica.ready()).json() != {"status": "ready"}:  # noqa: ASYNC110 (polled as a prober does)
                await asyncio.sleep(0.05)
    ready = [r for r in caplog.records if "Feishu is ready" in r.getMessage()]
    assert len(ready) == 1 and ready[0].levelno == logging.INFO, ready


@pytest.mark.parametrize("outage", ["a 5xx", "the network"])
async def test_with_feishu_alone_still_starting_the_replica_is_not_ready(
    make_replica, fake_api, unused_tcp_port, outage
):
    replica = await make_replica(telegram=False, **feishu_out_of_reach(outage, fake_api, unused_tcp_port))

    response = await replica.ready()
    assert response.status_code == 503
    assert response.json()["starting"]["feishu"].startswith("starting ("), response.text
