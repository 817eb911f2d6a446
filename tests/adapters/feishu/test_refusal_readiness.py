"""Feishu refusing the bot's identity (a wrong App Secret, a scope or bot capability missing) on a
replica that serves other platforms too must not take the replica out of the load balancer's
rotation: ``/readyz`` stays 200 while another configured platform works, naming Feishu and why on
one line (no secret), and Telegram's webhooks are answered meanwhile. With Feishu alone it fails
as before. The refusal is asked about again in the background, no more often than the re-check
interval, and readiness comes back without a restart once Feishu tells the identity, said once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from clarigate.adapters.feishu import FeishuAdapter, startup
from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.adapters.telegram.fake_bot_api import FakeBotApi
from tests.adapters.telegram.harness import SECRET as TELEGRAM_SECRET
from tests.adapters.telegram.harness import message_update, telegram_settings
from tests.conftest import config_for_tests

from .cards import text_of
from .conftest import feishu_settings
from .events import TENANT, message_event, signed
from .fake_open_api import FakeOpenApi
from .replicas import Replica, replicas

INFO = "/bot/v3/info"
TOKEN = "/auth/v3/tenant_access_token/internal"
APP_SECRET = "s3cret-the-bot-was-given"  # what the replica was configured with
RECHECK = 0.3  # the re-check interval in these tests (5 minutes in production)
BOT = {"key": "@_user_1", "id": {"open_id": "ou_bot"}, "name": "clarigate", "tenant_key": TENANT}


@pytest.fixture(autouse=True)
def quick_rechecks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The policies' shapes with waits short enough for a test (no spread: calls can be counted)."""
    monkeypatch.setattr(startup, "IDENTITY_RETRIES", RetryPolicy(first=0.1, cap=0.4))
    monkeypatch.setattr(startup, "REFUSAL_RECHECKS", RetryPolicy(first=RECHECK, cap=RECHECK), raising=False)


@pytest.fixture
async def make_replica(fake_api: FakeOpenApi, bot_api: FakeBotApi) -> AsyncIterator[Callable[..., Any]]:
    def store() -> MemoryStore:
        return MemoryStore(f"test-{uuid.uuid4().hex[:8]}")

    async with replicas(fake_api, bot_api, store, app_secret=SecretStr(APP_SECRET)) as build:
        yield build


async def until_ready(replica: Replica, seconds: float = 5.0) -> httpx.Response:
    async with asyncio.timeout(seconds):
        while (response := await replica.ready()).json() != {"status": "ready"}:  # noqa: ASYNC110
            await asyncio.sleep(0.05)  # what /readyz says, polled as a prober does
    return response


def asked(api: FakeOpenApi, path: str) -> int:
    return len([c for c in api.calls if c.path.endswith(path)])


async def test_a_refused_feishu_secret_leaves_the_replica_ready_for_telegram(make_replica, fake_api, bot_api):
    fake_api.app_secret = "the-secret-after-a-reset"  # Feishu refuses the replica's (code 10014)
    replica = await make_replica()

    response = await replica.ready()
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["status"] == "ready" and list(body["failed"]) == ["feishu"], body
    why = body["failed"]["feishu"]
    assert why.startswith("failed (Feishu refused the app's credentials: code 10014"), why
    assert "FEISHU_APP_SECRET" in why and "\n" not in why, why
    assert APP_SECRET not in response.text and "the-secret-after-a-reset" not in response.text

    # Telegram's webhooks keep reaching the replica and are answered
    update = message_update("hello from telegram")
    headers = {"X-Telegram-Bot-Api-Secret-Token": TELEGRAM_SECRET}
    assert (await replica.http.post("/telegram/webhook", json=update, headers=headers)).status_code == 200
    await replica.gateway.drain()
    assert "hello from telegram" in bot_api.of("sendMessage")[-1].params["text"]


async def test_with_feishu_alone_a_refusal_still_fails_readiness(make_replica, fake_api):
    fake_api.app_secret = "the-secret-after-a-reset"
    replica = await make_replica(telegram=False)

    response = await replica.ready()
    assert response.status_code == 503
    assert response.json()["failed"]["feishu"].startswith("failed (Feishu refused the app's credentials")


async def test_a_wrong_secret_is_asked_about_again_no_more_often_than_the_interval(
    make_replica, fake_api, caplog
):
    fake_api.app_secret = "the-secret-after-a-reset"
    with caplog.at_level(logging.DEBUG, logger="clarigate.adapters.feishu"):
        replica = await make_replica()
        await asyncio.sleep(4 * RECHECK + 0.1)

    tokens = [c.at for c in fake_api.calls if c.path.endswith(TOKEN)]
    assert 3 <= len(tokens) <= 5, tokens  # the first ask, then one per interval
    assert all(b - a >= RECHECK * 0.9 for a, b in zip(tokens, tokens[1:], strict=False)), tokens
    said = [r for r in caplog.records if r.name.startswith("clarigate.adapters.feishu")]
    assert len([r for r in said if r.levelno >= logging.WARNING]) == 1  # the refusal, said once
    assert (await replica.ready()).status_code == 200


@pytest.mark.parametrize("telegram", [True, False], ids=["beside telegram", "feishu alone"])
async def test_a_refusal_that_clears_is_noticed_without_a_restart(make_replica, fake_api, caplog, telegram):
    """bot/v3/info refused (HTTP 400, code 99991672: a scope the app lacks) until an admin grants
    it: the identity is asked about again and readiness comes back, one line saying so."""
    fake_api.fail_next(400, 99991672, times=10_000, path_part=INFO)
    replica = await make_replica(telegram=telegram)
    refused = await replica.ready()
    assert refused.status_code == (200 if telegram else 503)
    why = refused.json()["failed"]["feishu"]
    said = "failed (Feishu refused to tell the bot's identity: HTTP 400 code 99991672; asked again every"
    assert why == f"{said} {RECHECK:g} s)", why

    with caplog.at_level(logging.INFO, logger="clarigate.adapters.feishu"):
        fake_api.failures.clear()  # the scope granted: Feishu tells the identity again
        await until_ready(replica, seconds=10 * RECHECK)
        await asyncio.sleep(2 * RECHECK)

    recovered = [r for r in caplog.records if "Feishu is ready" in r.getMessage()]
    assert len(recovered) == 1 and recovered[0].levelno == logging.INFO
    assert asked(fake_api, INFO) >= 2 and replica.feishu.receiver.bot_open_id == "ou_bot"
    # the bot tells its own mention from others' again: a group mention of it is answered
    event = message_event("", chat="oc_team", chat_type="group")
    event["event"]["message"].update(content='{"text": "@_user_1 deploy it"}', mentions=[BOT])
    body, headers = signed(event)
    assert (await replica.http.post("/feishu/events", content=body, headers=headers)).status_code == 200
    await replica.gateway.drain()
    assert "You said: deploy it" in text_of(fake_api.shown()[-1])


async def test_a_refusal_is_asked_about_once_per_replica_whatever_its_worker_processes(
    fake_api, bot_api, redis_stores, caplog
):
    """``serve``'s web process and two worker processes of one replica (gateways on one Redis
    prefix, each started as ``serve`` starts it: the web process takes messages in, the workers run
    the jobs and send): the refusal is asked about by the process that takes messages in and answers
    ``/readyz`` for the replica, once per interval in all, and said once; a worker process does not
    ask about it again (nor answer ``/readyz`` failing for it)."""
    fake_api.app_secret = "the-secret-after-a-reset"
    prefix = f"test-{uuid.uuid4().hex[:12]}"
    settings = feishu_settings(fake_api, app_secret=SecretStr(APP_SECRET))
    processes: list[tuple[Gateway, FeishuAdapter]] = []
    try:
        with caplog.at_level(logging.DEBUG, logger="clarigate.adapters.feishu"):
            for role in ("web", "worker", "worker"):
                gateway = Gateway(config_for_tests(), redis_stores(prefix), ScriptedRunner())
                gateway.register(feishu := FeishuAdapter(settings, gateway))
                gateway.register(TelegramAdapter(telegram_settings(bot_api), gateway))
                processes.append((gateway, feishu))
                await gateway.start(jobs=role == "worker", receive=role == "web")
            for _, feishu in processes:
                await feishu.startup.wait()
            await asyncio.sleep(4 * RECHECK + 0.1)

        tokens = [c.at for c in fake_api.calls if c.path.endswith(TOKEN)]
        assert len(tokens) >= 3, tokens  # the first ask, then one per interval, for the replica
        assert all(b - a >= RECHECK * 0.9 for a, b in zip(tokens, tokens[1:], strict=False)), tokens
        said = [r for r in caplog.records if r.name.startswith("clarigate.adapters.feishu")]
        assert len([r for r in said if r.levelno >= logging.WARNING]) == 1, said  # said once
        answers = []
        for gateway, _ in processes:
            app = httpx.ASGITransport(app=build_app(gateway))
            async with httpx.AsyncClient(transport=app, base_url="http://gw") as http:
                answers.append((await http.get("/readyz")).json())
        assert list(answers[0]["failed"]) == ["feishu"], answers
        assert answers[1:] == [{"status": "ready"}] * 2, answers
    finally:
        for gateway, _ in processes:
            await gateway.stop(grace=0)
