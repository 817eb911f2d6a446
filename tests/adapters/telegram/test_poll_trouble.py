"""``getUpdates`` failing while this replica holds the lease: each failure met as it calls for
(a webhook set meanwhile deleted again, another poller or a refused token reported down, 5xx backed
off), each said once then at most once a minute, and the receiver's health following it.

The real adapter's poller on the fake Bot API; the waits between rounds are recorded (and kept
short by the policies set here), so nothing depends on how fast the machine is.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from clarigate.adapters.telegram import TelegramAdapter, polling
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.ops import liveness_problems
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests

from .harness import message_update, telegram_settings

WEBHOOK_ACTIVE = (
    "Conflict: can't use getUpdates method while webhook is active; "
    "use deleteWebhook to delete the webhook first"
)
OTHER_POLLER = (
    "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
)
DOWN = {"telegram": "receiver down"}


async def wait_until(condition, within: float = 15.0) -> None:
    """Poll ``condition`` until it holds (``TimeoutError`` after ``within`` seconds)."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (state changed by the poller's task)
            await asyncio.sleep(0.02)


@pytest.fixture
async def polling_bot(bot_api, monkeypatch) -> AsyncIterator[tuple[Gateway, TelegramAdapter, list[float]]]:
    """A started gateway polling the fake Bot API, holding the lease; the poller's waits recorded."""
    monkeypatch.setattr(polling, "FAILURE_RETRIES", RetryPolicy(first=0.05, cap=0.2), raising=False)
    monkeypatch.setattr(polling, "REFUSED_RETRIES", RetryPolicy(first=30.0, cap=30.0), raising=False)
    monkeypatch.setattr(polling, "DOWN_AFTER", 0.5, raising=False)
    runner = ScriptedRunner()
    gateway = Gateway(config_for_tests(), MemoryStore("tg-trouble"), runner)
    adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway, lease_ttl=3, poll_timeout=1)
    gateway.register(adapter)
    await gateway.start()
    poller = adapter.poller
    assert poller is not None
    waits: list[float] = []
    wait = poller._wait

    async def recorded(seconds: float) -> None:
        waits.append(seconds)
        await wait(seconds)

    poller._wait = recorded  # type: ignore[method-assign]
    try:
        await wait_until(lambda: poller.holding)
        yield gateway, adapter, waits
    finally:
        await gateway.stop(grace=0)


def lines(caplog: pytest.LogCaptureFixture, level: int, *words: str) -> list[str]:
    """The poller's lines at ``level`` holding every one of ``words``."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == polling.log.name and r.levelno == level and all(w in r.getMessage() for w in words)
    ]


def no_token(caplog: pytest.LogCaptureFixture, token: str) -> None:
    """No line of ours holds the token (httpx's request lines are masked by the log setup)."""
    ours = [r.getMessage() for r in caplog.records if r.name.startswith("clarigate.")]
    assert ours and not [line for line in ours if token in line]


async def test_a_webhook_set_meanwhile_is_deleted_again_and_polling_goes_on(polling_bot, bot_api, caplog):
    gateway, adapter, _ = polling_bot
    assert len(bot_api.of("deleteWebhook")) == 1  # when the lease was taken
    caplog.set_level(logging.INFO)
    bot_api.fail_next("getUpdates", 409, description=WEBHOOK_ACTIVE)
    await wait_until(lambda: len(bot_api.of("deleteWebhook")) == 2)
    bot_api.queue_update(message_update("after the webhook"))
    await wait_until(lambda: len(gateway.runner.calls) == 1)  # type: ignore[attr-defined]
    assert len(bot_api.of("deleteWebhook")) == 2  # once for this conflict
    assert len(lines(caplog, logging.WARNING, "webhook was set", "deleting it again")) == 1
    assert await liveness_problems(gateway) == {}
    no_token(caplog, bot_api.token)


async def test_another_poller_is_said_once_backed_off_and_reported(polling_bot, bot_api, caplog):
    gateway, adapter, waits = polling_bot
    caplog.set_level(logging.INFO)
    bot_api.fail_always("getUpdates", 409, description=OTHER_POLLER)
    await wait_until(lambda: len(waits) >= 4)
    assert await liveness_problems(gateway) == DOWN  # at once: it lasts until the other stops
    assert waits[:4] == [0.05, 0.1, 0.2, 0.2]  # backing off, capped
    assert len(lines(caplog, logging.WARNING, "another instance polls getUpdates with this bot's token")) == 1
    assert not lines(caplog, logging.WARNING, "another instance", "more like it")  # within the minute
    bot_api.recover("getUpdates")
    await wait_until(lambda: adapter.poller.running)
    assert await liveness_problems(gateway) == {}
    assert lines(caplog, logging.INFO, "getUpdates answers again")
    no_token(caplog, bot_api.token)


async def test_a_refused_token_is_one_error_a_slow_retry_and_a_failing_health(polling_bot, bot_api, caplog):
    gateway, adapter, waits = polling_bot
    caplog.set_level(logging.INFO)
    calls = len(bot_api.of("getUpdates"))
    bot_api.fail_always("getUpdates", 401, description="Unauthorized")
    await wait_until(lambda: len(bot_api.of("getUpdates")) > calls)
    await wait_until(lambda: not adapter.poller.running)
    await asyncio.sleep(2.5)  # the committed poller asked twice more meanwhile
    assert len(bot_api.of("getUpdates")) == calls + 1  # asked again only after REFUSED_RETRIES
    assert waits[-1] == 30.0
    assert await liveness_problems(gateway) == DOWN
    errors = lines(caplog, logging.ERROR, "Telegram refuses TELEGRAM_BOT_TOKEN")
    assert len(errors) == 1 and "every 30 s" in errors[0]
    assert not lines(caplog, logging.WARNING, "getUpdates")
    no_token(caplog, bot_api.token)


@pytest.mark.parametrize("status", [502, 500])
async def test_a_failing_bot_api_is_backed_off_reported_down_then_up(polling_bot, bot_api, caplog, status):
    gateway, adapter, waits = polling_bot
    caplog.set_level(logging.INFO)
    bot_api.fail_always("getUpdates", status, description="Bad Gateway")
    await wait_until(lambda: len(waits) >= 3)
    assert waits[:3] == [0.05, 0.1, 0.2]
    assert await liveness_problems(gateway) == {}  # not for a blip: only once it lasts DOWN_AFTER
    await wait_until(lambda: not adapter.poller.running)
    assert await liveness_problems(gateway) == DOWN
    assert len(lines(caplog, logging.WARNING, "getUpdates failed")) == 1  # the rest within the minute
    bot_api.recover("getUpdates")
    await wait_until(lambda: adapter.poller.running)
    assert await liveness_problems(gateway) == {}
    assert lines(caplog, logging.INFO, "getUpdates answers again")
    no_token(caplog, bot_api.token)


async def test_repeated_failures_are_summed_up_once_a_minute(polling_bot, bot_api, caplog, monkeypatch):
    gateway, adapter, waits = polling_bot
    now = [1000.0]
    monkeypatch.setattr("clarigate.gateway.runtime.repeated.clock", lambda: now[0])
    caplog.set_level(logging.INFO)
    bot_api.fail_always("getUpdates", 502, description="Bad Gateway")
    await wait_until(lambda: len(waits) >= 3)
    now[0] += 61  # a minute on: the next failure is said with how many were not
    count = len(waits)
    await wait_until(lambda: len(waits) > count)
    said = lines(caplog, logging.WARNING, "getUpdates failed")
    assert len(said) == 2 and "more like it since the last such line" in said[1], said
