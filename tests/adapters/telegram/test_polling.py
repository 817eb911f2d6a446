"""Long polling: one poller across replicas (a lease in Redis), handed over when its holder goes."""

from __future__ import annotations

import asyncio

import pytest
from telegram import Bot

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.telegram.polling import LeasedPoller
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import test_config as gateway_config

from .conftest import redis_store
from .harness import message_update, telegram_settings


async def wait_until(condition, within: float = 15.0) -> None:
    """Poll ``condition`` until it holds (``TimeoutError`` after ``within`` seconds)."""
    async with asyncio.timeout(within):
        while not condition():  # noqa: ASYNC110 (state changed by other tasks and by Redis)
            await asyncio.sleep(0.05)


async def replica(bot_api, prefix: str, runner: ScriptedRunner) -> tuple[Gateway, TelegramAdapter]:
    store = redis_store(prefix)
    gateway = Gateway(gateway_config(), store, runner)
    adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway, lease_ttl=3, poll_timeout=1)
    gateway.register(adapter)
    await gateway.start()
    return gateway, adapter


async def test_one_replica_polls_and_the_lease_moves_when_it_dies(bot_api, redis_prefix):
    runner = ScriptedRunner()
    first, first_adapter = await replica(bot_api, redis_prefix, runner)
    await wait_until(lambda: first_adapter.poller.holding)
    second, second_adapter = await replica(bot_api, redis_prefix, runner)
    try:
        assert bot_api.of("deleteWebhook")  # polling mode clears any webhook first
        bot_api.queue_update(message_update("first"))
        await wait_until(lambda: [c.text for c in runner.calls] == ["first"])
        await asyncio.sleep(1.2)  # the second replica has tried for the lease meanwhile
        assert not second_adapter.poller.holding

        # The holder dies without a word: its lease must run out before anyone else polls.
        first_adapter.poller._task.cancel()
        first_adapter.poller.holding = False
        await first.stop(grace=0)
        bot_api.queue_update(message_update("second"))
        await wait_until(lambda: second_adapter.poller.holding)
        await wait_until(lambda: [c.text for c in runner.calls] == ["first", "second"])
        await second.drain()
        assert [c.params["text"] for c in bot_api.of("sendMessage")] == [
            "You said: first",
            "You said: second",
        ]
    finally:
        await second.stop(grace=0)
        await first.store.close()
        await second.store.close()


async def test_a_stopping_replica_hands_the_lease_over_at_once(bot_api, redis_prefix):
    runner = ScriptedRunner()
    first, first_adapter = await replica(bot_api, redis_prefix, runner)
    await wait_until(lambda: first_adapter.poller.holding)
    second, second_adapter = await replica(bot_api, redis_prefix, runner)
    try:
        await first.stop(grace=0)  # releases the lease
        update = message_update("after handover")
        bot_api.queue_update(update)
        await wait_until(lambda: second_adapter.poller.holding, within=3)
        await wait_until(lambda: [c.text for c in runner.calls] == ["after handover"])
        # The offset moved on: the update is confirmed and not served again.
        await asyncio.sleep(0.5)
        assert [c.text for c in runner.calls] == ["after handover"]
        assert all(u["update_id"] != update["update_id"] for u in bot_api.updates)
    finally:
        await second.stop(grace=0)
        await first.store.close()
        await second.store.close()


async def test_an_update_that_keeps_failing_is_retried_then_skipped(bot_api):
    store = MemoryStore("t-poison")
    bot = Bot(bot_api.token, base_url=bot_api.base_url)
    handled: list[int] = []
    poison = message_update("boom")
    fine = message_update("fine")

    async def handle(update) -> None:
        if update.update_id == poison["update_id"]:
            handled.append(-1)
            raise RuntimeError("bug")
        handled.append(update.update_id)

    poller = LeasedPoller(bot, store, handle, lease_ttl=3, poll_timeout=0)
    bot_api.queue_update(poison)
    bot_api.queue_update(fine)
    async with bot:
        for _ in range(2):
            with pytest.raises(RuntimeError):
                await poller.poll_once()
        assert await poller.poll_once() == 2
    assert handled == [-1, -1, -1, fine["update_id"]]
    assert await store.get_json("poll-offset") == fine["update_id"] + 1
    await store.close()
