"""Every log line of a whole Feishu run holds no configured secret, nor the tenant token."""

from __future__ import annotations

import logging

import httpx
import pytest
from pydantic import SecretStr

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.conftest import config_for_tests
from tests.log_capture import assert_no_secret, captured_logs, carries_inbound_id

from .cards import button, payload, text_of
from .conftest import FeishuBot, feishu_settings
from .events import ENCRYPT_KEY, VERIFICATION_TOKEN, card_action, message_event

APP_SECRET = "feishu-app-secret-0123456789"


def script(turn):
    if turn.response is None:
        return asking(choice_request("Which database?", ["Postgres", "SQLite"]))
    return TurnOutput(replies=["using it"])


@pytest.mark.parametrize(
    ("log_format", "level", "chatty"),
    [("text", logging.INFO, False), ("json", logging.DEBUG, False), ("text", logging.DEBUG, True)],
)
async def test_webhook_run_logs_no_secret(fake_api, log_format, level, chatty):
    secrets = [APP_SECRET, VERIFICATION_TOKEN, ENCRYPT_KEY]
    with captured_logs(secrets, log_format=log_format, level=level, chatty_libraries=chatty) as logs:
        gateway = Gateway(config_for_tests(), MemoryStore("feishu-secrets"), ScriptedRunner(script))
        adapter = FeishuAdapter(feishu_settings(fake_api, app_secret=SecretStr(APP_SECRET)), gateway)
        gateway.register(adapter)
        await gateway.start()
        http = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gateway"
        )
        bot = FeishuBot(gateway, adapter, gateway.runner, fake_api, http)  # type: ignore[arg-type]
        try:
            assert await adapter.check() == []
            assert (await bot.deliver(message_event("set up storage"))).status_code == 200
            await gateway.drain()
            message_id, card = list(fake_api.cards.items())[-1]
            reply = await bot.click(card_action(payload(button(card, "SQLite")), message_id=message_id))
            assert "SQLite" in text_of(reply["card"]["data"])
            await gateway.drain()
            assert (await bot.deliver(message_event("forged"), forge=True)).status_code == 401
            fake_api.revoke_token()  # the next call is refused with 401 and a fresh token is fetched
            assert (await bot.deliver(message_event("again"))).status_code == 200
            await gateway.drain()
            # what a careless line would print: the redactor masks it
            logging.getLogger("clarigate.adapters.feishu").warning(
                "token request: %s", {"app_secret": APP_SECRET}
            )
        finally:
            await http.aclose()
            await gateway.stop(grace=0)
    assert_no_secret(logs, [*secrets, fake_api.token])
    assert len(logs.lines()) > 3 and "{'app_secret': '***'}" in logs.text()
    calls = [
        line for line in logs.lines() if "feishu POST /open-apis/im/v1/messages" in line and ": ok" in line
    ]
    assert any(carries_inbound_id(line, "feishu") for line in calls)  # the run's inbound id rides along
