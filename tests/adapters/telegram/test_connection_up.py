"""The poller's state reaches /healthz and the platform-connected gauge; webhook mode has none."""

from __future__ import annotations

from prometheus_client import REGISTRY

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary import retry
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.ops import OpsSampler, liveness_problems
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests

from .harness import telegram_settings


async def test_the_poller_is_reported_up_then_down(bot_api):
    gateway = Gateway(config_for_tests(), MemoryStore("tg-up"), ScriptedRunner())
    adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway)
    gateway.register(adapter)
    await gateway.start()
    try:
        await OpsSampler(gateway, None).sample_once()
        assert REGISTRY.get_sample_value("clarigate_platform_connected", {"platform": "telegram"}) == 1
        assert await liveness_problems(gateway) == {}
        assert adapter.poller is not None
        await adapter.poller.stop()  # as if the poller had died
        await OpsSampler(gateway, None).sample_once()
        assert REGISTRY.get_sample_value("clarigate_platform_connected", {"platform": "telegram"}) == 0
        assert await liveness_problems(gateway) == {"telegram": "receiver down"}
    finally:
        await gateway.stop(grace=0)


async def test_webhook_mode_holds_no_connection(bot_api):
    gateway = Gateway(config_for_tests(), MemoryStore("tg-hook"), ScriptedRunner())
    adapter = TelegramAdapter(telegram_settings(bot_api), gateway)
    assert await adapter.connection_up() is None


async def test_a_worker_process_sends_without_polling(bot_api):
    """``serve``'s worker process starts its adapters without receivers: no second poller, no
    webhook registered again, nothing reported down for a receiver it never had."""
    gateway = Gateway(config_for_tests(), MemoryStore("tg-worker"), ScriptedRunner())
    adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway)
    gateway.register(adapter)
    await gateway.start(receive=False)
    try:
        assert bot_api.of("getMe")  # the token is checked: sending works
        assert not bot_api.of("getUpdates") and not bot_api.of("deleteWebhook")
        assert not bot_api.of("setMyCommands")
        assert await adapter.connection_up() is None
        assert await liveness_problems(gateway) == {}
    finally:
        await gateway.stop(grace=0)


async def test_a_flood_wait_on_the_command_menu_does_not_hold_the_webhook_back(bot_api, monkeypatch):
    """The menu is kept from the last start: a 20 s flood wait on ``setMyCommands`` is not waited
    out (nor met again for the next language) before the webhook is registered."""
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    bot_api.fail_always("setMyCommands", 429, retry_after=20)
    gateway = Gateway(config_for_tests(), MemoryStore("tg-menu"), ScriptedRunner())
    gateway.register(TelegramAdapter(telegram_settings(bot_api), gateway))
    await gateway.start()
    try:
        assert len(bot_api.of("setMyCommands")) == 1  # refused with a long wait: given up at once
        assert bot_api.of("setWebhook") and all(wait < 5 for wait in waits), waits
    finally:
        await gateway.stop(grace=0)
