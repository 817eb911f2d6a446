"""Sending through lark-oapi: one call per attempt, failures classified, nothing posted twice."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.feishu.open_api import FeishuApiError, build_client
from clarigate.adapters.feishu.render import card_json, render_notice
from clarigate.adapters.feishu.send import FeishuSender
from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import retry
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.runtime.metrics import DELIVERY_RETRIES, PLATFORM_API_ERRORS

from .cards import text_of
from .conftest import feishu_settings
from .events import encrypt, message_event

P2P = Conversation(platform="feishu", workspace="t", chat_id="oc_p2p", is_direct=True)


def quick_sender(api) -> FeishuSender:
    """A sender on the fake."""
    return FeishuSender(build_client(feishu_settings(api)))


def errors(kind: str) -> float:
    return PLATFORM_API_ERRORS.labels("feishu", kind)._value.get()


async def test_a_rate_limit_is_one_call_and_a_transient_failure_with_the_reset(fake_api):
    sender = quick_sender(fake_api)
    fake_api.fail_next(429, 99991400, headers={"x-ogw-ratelimit-reset": "7"})
    fake_api.fail_next(400, 99991400)  # the same limit reported with HTTP 400
    before = errors("rate_limited")

    for _ in range(2):
        with pytest.raises(FeishuApiError) as limited:
            await sender.post_message("oc_p2p", card_json({"schema": "2.0", "body": {"elements": []}}))
        assert not limited.value.permanent and limited.value.code == "99991400"
    assert limited.value.retry_after is None  # the HTTP 400 named no reset
    assert len(fake_api.posted()) == 2  # one call per attempt: the core's delivery retries
    assert errors("rate_limited") - before == 2


async def test_server_errors_are_transient_failures_of_one_call(fake_api):
    sender = quick_sender(fake_api)
    fake_api.fail_next(503, 1)
    with pytest.raises(FeishuApiError) as unavailable:
        await sender.post_message("oc_1", card_json(render_notice("c")))
    assert not unavailable.value.permanent
    assert [c.method for c in fake_api.message_calls()] == ["POST"]


async def test_one_server_error_costs_one_call_per_core_attempt(make_bot, monkeypatch):
    waits: list[float] = []

    async def no_wait(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    bot = await make_bot(
        ScriptedRunner(lambda turn: TurnOutput(replies=["All done."])), progress_after_seconds=60
    )
    retries_before = DELIVERY_RETRIES._value.get()
    bot.api.fail_next(500, 1, method="POST")  # then 200
    response = await bot.deliver(message_event("go"))
    assert response.status_code == 200
    await bot.gateway.drain()
    core_attempts = 1 + DELIVERY_RETRIES._value.get() - retries_before
    assert [text_of(c) for c in bot.api.shown()] == ["All done."]
    assert len(bot.api.posted()) == core_attempts == 2  # no retry inside the adapter
    assert len(waits) == 1


async def test_client_errors_are_not_retried(fake_api):
    sender = quick_sender(fake_api)
    with pytest.raises(FeishuApiError) as raised:
        await sender.update_card("om_missing", render_notice("d"))
    assert raised.value.permanent and raised.value.code == "230001" and len(fake_api.patched()) == 1


async def test_a_reply_survives_server_errors_end_to_end(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=["All done."])))
    bot.api.fail_next(500, 1, times=2, method="POST")
    await bot.deliver(message_event("go"))
    await bot.gateway.drain()
    assert [text_of(c) for c in bot.api.shown() if text_of(c) == "All done."] == ["All done."]


async def test_a_slow_api_call_does_not_block_the_event_loop(make_bot):
    bot = await make_bot()
    bot.api.hold = threading.Event()
    sending = asyncio.create_task(bot.adapter.send(P2P, TextReply(text="slow")))
    assert await asyncio.to_thread(bot.api.message_arrived.wait, 5)

    challenge = {"challenge": "still-here", "token": "v-token-123", "type": "url_verification"}
    body = json.dumps({"encrypt": encrypt(json.dumps(challenge).encode())}).encode()
    answer = await bot.http.post("/feishu/events", content=body)
    assert answer.json() == {"challenge": "still-here"} and not sending.done()

    bot.api.hold.set()
    await sending
    assert [text_of(c) for c in bot.api.shown()] == ["slow"]


def test_domain_switches_between_feishu_lark_and_a_test_server():
    lark = build_client(FeishuSettings(app_id="a", domain="https://open.larksuite.com"))
    local = build_client(FeishuSettings(app_id="a", domain="http://127.0.0.1:8081/"))
    assert lark.config.domain == "https://open.larksuite.com"
    assert local.config.domain == "http://127.0.0.1:8081"
    assert build_client(FeishuSettings(app_id="a")).config.domain == "https://open.feishu.cn"


async def test_check_accepts_working_credentials_and_names_what_is_missing(fake_api):
    good = FeishuAdapter(feishu_settings(fake_api), gateway=None)  # type: ignore[arg-type]
    assert await good.check() == []
    unsafe = FeishuAdapter(feishu_settings(fake_api, encrypt_key=None), gateway=None)  # type: ignore[arg-type]
    assert any("FEISHU_ENCRYPT_KEY" in p for p in await unsafe.check())
    nowhere = FeishuAdapter(feishu_settings(fake_api, domain="http://127.0.0.1:9"), gateway=None)  # type: ignore[arg-type]
    assert any("unreachable" in p for p in await nowhere.check())
    assert await FeishuAdapter(FeishuSettings(), gateway=None).check() == [  # type: ignore[arg-type]
        "FEISHU_APP_ID and FEISHU_APP_SECRET are required"
    ]


async def test_the_per_chat_limit_is_transient_not_a_refusal(fake_api):
    sender = quick_sender(fake_api)
    fake_api.fail_next(400, 230020)  # "this operation triggers the frequency limit" (5/s per chat)
    before = errors("rate_limited")
    with pytest.raises(FeishuApiError) as limited:
        await sender.post_message("oc_busy", card_json(render_notice("part 6 of a long reply")))
    assert not limited.value.permanent  # the core's delivery waits it out and sends again
    message_id = await sender.post_message("oc_busy", card_json(render_notice("part 6 of a long reply")))
    assert list(fake_api.cards) == [message_id] and len(fake_api.posted()) == 2
    assert errors("rate_limited") - before == 1


async def test_a_revoked_tenant_token_is_fetched_anew(fake_api):
    sender = quick_sender(fake_api)
    await sender.post_message("oc_1", card_json(render_notice("with the first token")))
    fake_api.revoke_token()  # lark-oapi still caches the old one for up to two hours

    await sender.post_message("oc_1", card_json(render_notice("with a new token")))
    assert [text_of(c) for c in fake_api.shown()] == ["with the first token", "with a new token"]
    tokens = [c for c in fake_api.calls if c.path.endswith("/tenant_access_token/internal")]
    assert len(tokens) == 2


async def test_the_cores_delivery_id_is_the_messages_uuid_so_a_repeated_send_shows_once(make_bot):
    bot = await make_bot()
    key = "6f0c1a9e-3b1d-5c8e-9a41-0d2b7f3e8c11"
    long = TextReply(text="word " * 2000, delivery_id=key)
    await bot.adapter.send(P2P, long)
    await bot.adapter.send(P2P, long)  # the core retries after a crash between Feishu's answer and its record
    keys = [c.body["uuid"] for c in bot.api.posted()]
    half = len(keys) // 2
    assert half >= 2 and keys[:half] == keys[half:]  # the same uuids again: Feishu shows each part once
    assert keys[0] == key and len(set(keys[:half])) == half
    assert len(bot.api.shown()) == half and "".join(text_of(c) for c in bot.api.shown()).count("word") == 2000


async def test_a_chat_the_bot_is_no_longer_in_refuses_the_bot(fake_api):
    sender = quick_sender(fake_api)
    fake_api.fail_next(400, 230002)  # "Bot/User can NOT be out of the chat": removed, or disbanded
    with pytest.raises(FeishuApiError) as refused:
        await sender.post_message("oc_left", card_json(render_notice("hello")))
    assert refused.value.chat_refused  # the recipient is gone: the core counts it apart
    fake_api.fail_next(400, 230001)
    with pytest.raises(FeishuApiError) as invalid:
        await sender.post_message("oc_left", card_json(render_notice("hello")))
    assert invalid.value.permanent and not invalid.value.chat_refused
