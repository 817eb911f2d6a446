"""``clarigate admin pending --cancel``: the question's message on Telegram shows it closed."""

from __future__ import annotations

import asyncio
import json
import logging
import os

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES

from .conftest import REDIS_URL, redis_store
from .harness import message_update, open_bench


def script(turn):
    if turn.response is None:
        return asking(choice_request("Which region?", ["eu", "us"]))
    return TurnOutput(replies=[f"noted: {turn.response.response_kind}"])


async def test_cancel_from_the_cli_closes_the_question_on_telegram(
    bot_api, redis_prefix, monkeypatch, capsys
):
    store = redis_store(redis_prefix)
    runner = ScriptedRunner(script)
    tg = await open_bench(bot_api, store, runner)
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REDIS_URL", REDIS_URL)
    monkeypatch.setenv("CLARIGATE_BOT_ID", redis_prefix)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", bot_api.token)
    monkeypatch.setenv("TELEGRAM_API_URL", bot_api.base_url)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        await tg.deliver(message_update("deploy"))
        assert any(c.markup for c in bot_api.of("sendMessage"))
        code = await asyncio.to_thread(main, ["admin", "pending", "--json"])
        pending = json.loads(capsys.readouterr().out)
        assert code == 0 and len(pending) == 1
        request_id = pending[0]["request_id"]

        code = await asyncio.to_thread(main, ["admin", "pending", "--cancel", request_id, "--yes", "--json"])
        result = json.loads(capsys.readouterr().out)
        assert code == 0 and result["message_closed"] is True, result
        # the person sees the question closed: its message edited, the buttons gone
        closed = bot_api.of("editMessageText")[-1]
        assert "Cancelled by an operator" in closed.params["text"] and not closed.buttons
        await tg.gateway.drain(inbound_ids=[f"answer:{request_id}"])
        assert runner.calls[-1].response.response_kind == "declined"
        assert bot_api.of("sendMessage")[-1].params["text"] == "noted: declined"
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        await tg.close()
        await store.close()
