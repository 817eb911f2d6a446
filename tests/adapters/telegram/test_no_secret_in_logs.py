"""Every log line of a whole Telegram run, webhook and polling, holds no configured secret."""

from __future__ import annotations

import asyncio
import logging

import pytest

from clarigate.adapters.telegram import TelegramAdapter
from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.redaction import register_secrets
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests
from tests.log_capture import assert_no_secret, captured_logs, carries_inbound_id

from .harness import SECRET, callback_update, message_update, open_bench, telegram_settings

VARIANTS = [
    pytest.param("text", logging.INFO, False, id="text-info"),
    pytest.param("json", logging.DEBUG, False, id="json-debug"),
    pytest.param("text", logging.DEBUG, True, id="debug-with-chatty-libraries"),
]


def script(turn):
    if turn.response is None:
        return asking(choice_request("Which region?", ["eu", "us"]))
    return TurnOutput(replies=["deploying"])


@pytest.mark.parametrize(("log_format", "level", "chatty"), VARIANTS)
async def test_webhook_run_logs_no_secret(bot_api, log_format, level, chatty):
    secrets = [bot_api.token, SECRET]
    with captured_logs(secrets, log_format=log_format, level=level, chatty_libraries=chatty) as logs:
        store = MemoryStore("tg-secrets")
        tg = await open_bench(bot_api, store, ScriptedRunner(script))
        try:
            assert await tg.adapter.check() == []
            await tg.deliver(message_update("deploy"))
            asked = next(c for c in bot_api.of("sendMessage") if c.markup)
            await tg.deliver(callback_update(asked.buttons[0][1]["callback_data"], 1000))
            assert bot_api.of("sendMessage")[-1].params["text"] == "deploying"
            rejected = await tg.post(message_update("intruder"), secret="wrong-" + SECRET)
            assert rejected.status_code in (401, 403)
            bot_api.fail_next("sendMessage", 500, times=3)
            await tg.deliver(message_update("again"))
            logging.getLogger("tests").error(
                "token in a failing URL: %s", f"{bot_api.base_url}{bot_api.token}/x"
            )
        finally:
            await tg.close()
            await store.close()
    assert_no_secret(logs, secrets)
    assert len(logs.lines()) > 3
    # each Bot API call has its line, with the message it made and the run's inbound id
    calls = [line for line in logs.lines() if "sendMessage: ok, message " in line]
    assert any(carries_inbound_id(line, "telegram") for line in calls)  # the run's inbound id rides along
    if chatty:  # the library lines were written, with the token masked, not just left out
        assert any("/bot***/" in line for line in logs.lines() if "httpx" in line)


async def test_polling_run_and_a_wrong_token_log_no_secret(bot_api):
    secrets = [bot_api.token]
    with captured_logs(secrets, chatty_libraries=True) as logs:
        gateway = Gateway(config_for_tests(), MemoryStore("tg-poll-secrets"), ScriptedRunner())
        adapter = TelegramAdapter(telegram_settings(bot_api, webhook=False), gateway)
        gateway.register(adapter)
        await gateway.start()
        try:
            bot_api.queue_update(message_update("hello"))
            for _ in range(200):
                if bot_api.of("sendMessage"):
                    break
                await asyncio.sleep(0.02)
            assert bot_api.of("sendMessage")
        finally:
            await gateway.stop(grace=0)
        wrong = TelegramAdapter(telegram_settings(bot_api, bot_token="999999:WRONG-token-value"), gateway)
        secrets.append("999999:WRONG-token-value")
        register_secrets(["999999:WRONG-token-value"])
        problems = await wrong.check()
        assert problems
        logging.getLogger("tests").warning("check said: %s", problems)
    assert_no_secret(logs, secrets)
