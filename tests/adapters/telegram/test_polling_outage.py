"""Redis (the store) unreachable while the poller holds Telegram's updates: an update the store
cannot take is left unconfirmed (the offset held) and fetched again until Redis is back, however
long that takes; one warning line, no traceback; then it runs once and is answered once.

The real adapter's poller on the fake Bot API; the store is a real Redis reached through a proxy
that is cut and brought back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

import pytest
import redis.exceptions

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.redis import RedisStore
from tests.conftest import test_config as gateway_config

from ...gateway.tcp_proxy import OutageProxy
from .conftest import REDIS_URL
from .harness import message_update, telegram_settings

POLLER_LOG = "clarigate.adapters.telegram.polling"


@pytest.fixture
async def proxy() -> AsyncIterator[OutageProxy]:
    proxy = OutageProxy(urlsplit(REDIS_URL).port or 6379)
    await proxy.start()
    yield proxy
    await proxy.cut()


async def wait_until(condition, within: float = 15.0) -> None:
    """Poll ``condition`` until it holds (``TimeoutError`` after ``within`` seconds)."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (state changed by the poller's task)
            await asyncio.sleep(0.02)


def poller_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    """What the poller logged at ``level`` or above (the core's loops say their own)."""
    return [r for r in caplog.records if r.name == POLLER_LOG and r.levelno >= level]


async def polling(bot_api, store, runner: ScriptedRunner) -> tuple[Gateway, TelegramAdapter]:
    gateway = Gateway(gateway_config(), store, runner)
    adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway, lease_ttl=3, poll_timeout=1)
    gateway.register(adapter)
    await gateway.start()
    assert adapter.poller is not None
    await wait_until(lambda: adapter.poller is not None and adapter.poller.holding)
    return gateway, adapter


async def test_an_update_met_by_a_redis_outage_is_fetched_again_and_runs_once_when_it_is_back(
    bot_api, redis_prefix: str, proxy: OutageProxy, caplog: pytest.LogCaptureFixture
):
    runner = ScriptedRunner()
    store = RedisStore(f"redis://127.0.0.1:{proxy.port}/0", redis_prefix)
    gateway, _ = await polling(bot_api, store, runner)
    try:
        asked = len(bot_api.of("getUpdates"))
        await wait_until(lambda: len(bot_api.of("getUpdates")) > asked)  # a long poll is waiting
        await proxy.cut()
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            bot_api.queue_update(message_update("hello"))  # answers that poll: taken while Redis is down
            await wait_until(lambda: len(poller_lines(caplog, logging.DEBUG)) >= 3)  # three rounds
        [warning] = poller_lines(caplog, logging.WARNING)
        assert warning.levelno == logging.WARNING and warning.exc_info is None
        assert "left unconfirmed and fetched again until it is back" in warning.getMessage()
        assert not any(r.exc_info for r in poller_lines(caplog, logging.DEBUG))  # no traceback
        assert runner.calls == [] and bot_api.updates  # not confirmed: Telegram still holds it

        await proxy.restore()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            await wait_until(lambda: [c.text for c in runner.calls] == ["hello"])
            await gateway.drain(timeout=10)
        assert [r.getMessage() for r in poller_lines(caplog, logging.INFO)] == [
            "the store answers again: Telegram updates are handled as usual"
        ]
        assert [c.params["text"] for c in bot_api.of("sendMessage")] == ["You said: hello"]
        assert [c.text for c in runner.calls] == ["hello"]
    finally:
        await gateway.stop(grace=0)
        await store.close()


async def test_an_update_the_store_keeps_failing_is_never_given_up(bot_api, monkeypatch):
    """A bug is given up after three rounds, so it cannot stall the updates behind it; an
    outage is not: the update waits for the store however many rounds that takes."""
    runner = ScriptedRunner()
    gateway, adapter = await polling(bot_api, MemoryStore("t-tg-outage"), runner)
    accept = gateway.accept
    failures = iter(range(5))

    async def store_down_five_times(message):  # type: ignore[no-untyped-def]
        if next(failures, None) is not None:
            raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379.")
        return await accept(message)

    monkeypatch.setattr(gateway, "accept", store_down_five_times)
    try:
        bot_api.queue_update(message_update("hello"))
        await wait_until(lambda: [c.text for c in runner.calls] == ["hello"])
        await gateway.drain(timeout=10)
        assert [c.params["text"] for c in bot_api.of("sendMessage")] == ["You said: hello"]
    finally:
        await gateway.stop(grace=0)
