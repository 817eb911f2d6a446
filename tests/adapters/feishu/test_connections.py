"""One keep-alive connection pool for the adapter's calls (lark-oapi alone opens one per call)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from lark_oapi.core.enum import AccessTokenType, HttpMethod
from lark_oapi.core.model import BaseRequest

from clarigate.adapters.feishu.lark_sdk import POOL_SIZE
from clarigate.adapters.feishu.open_api import build_client
from clarigate.gateway.boundary.messages import Attachment, Conversation
from clarigate.gateway.boundary.outbound_items import TextReply

from .conftest import feishu_settings

P2P = Conversation(platform="feishu", workspace="t", chat_id="oc_p2p", is_direct=True)


def bot_info() -> BaseRequest:
    return (
        BaseRequest.builder()
        .http_method(HttpMethod.GET)
        .uri("/open-apis/bot/v3/info")
        .token_types({AccessTokenType.TENANT})
        .build()
    )


def test_lark_oapi_alone_opens_a_new_connection_for_every_call(fake_api):
    client = build_client(feishu_settings(fake_api))
    for _ in range(3):
        assert client.request(bot_info()).code == 0
    # the token and three calls: four connections (the fake tells them apart; nothing changed
    # for lark-oapi calls made outside the adapter's sender)
    assert len(fake_api.calls) == 4 and len(fake_api.peers()) == 4


async def test_the_adapters_calls_reuse_one_connection(make_bot):
    bot = await make_bot()  # started: the token and the bot's identity fetched
    bot.api.resources[("om_img", "img_1")] = ("image", b"\x89PNG0000", "image/png")
    for index in range(5):
        await bot.adapter.send(P2P, TextReply(text=f"reply {index}"))
    image = Attachment(kind="image", name="image", ref="om_img/image/img_1")
    assert await bot.adapter.fetch_attachment(image, max_bytes=1000)
    calls = bot.api.calls
    assert [c.path.rsplit("/", 1)[-1] for c in calls].count("messages") == 5 and len(calls) == 8
    assert len(bot.api.peers()) == 1  # token, bot info, 5 posts and a download: one TCP connection


async def test_calls_at_once_take_connections_from_the_pool_and_give_them_back(make_bot):
    bot = await make_bot()
    bot.api.calls.clear()
    await asyncio.gather(*(bot.adapter.send(P2P, TextReply(text=f"first {i}")) for i in range(8)))
    first = bot.api.peers()
    bot.api.calls.clear()
    await asyncio.gather(*(bot.adapter.send(P2P, TextReply(text=f"again {i}")) for i in range(8)))
    again = bot.api.peers()
    # at most one connection per call in flight, kept for the next burst: 16 posts on at most 8
    assert len(first | again) <= min(8, POOL_SIZE) and len(bot.api.connections_opened) <= 1 + 8


async def test_stop_closes_the_pools_connections(make_bot):
    bot = await make_bot()
    await bot.adapter.send(P2P, TextReply(text="hello"))
    used = bot.api.peers()
    assert used and not used & set(bot.api.connections_closed)  # kept open between calls
    await bot.adapter.stop()
    assert await asyncio.to_thread(within, 5.0, lambda: used <= set(bot.api.connections_closed))


def within(seconds: float, condition: Callable[[], bool]) -> bool:
    """Whether ``condition`` comes true within ``seconds`` (the fake's threads see the closes)."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


async def test_the_environments_proxy_is_honoured_read_once_when_the_sender_is_made(fake_api, monkeypatch):
    from clarigate.adapters.feishu.open_api import FeishuApiError
    from clarigate.adapters.feishu.send import FeishuSender

    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HTTPS_PROXY", fake_api.url)  # the fake takes the proxy's connection
    sender = FeishuSender(build_client(feishu_settings(fake_api, domain="https://open.feishu.invalid")))
    monkeypatch.delenv("HTTPS_PROXY")  # read when the sender was made, not on every call
    try:
        await sender.bot_open_id()
    except FeishuApiError:
        pass  # the fake is no proxy: it refuses CONNECT
    assert fake_api.connections_opened  # the call went to the proxy (the host itself does not resolve)


async def test_no_proxy_for_the_open_apis_host_goes_straight_there(fake_api, monkeypatch):
    from clarigate.adapters.feishu.send import FeishuSender

    monkeypatch.setenv("HTTP_PROXY", "http://127.0.0.1:9")  # nothing listens: a call through it fails
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    sender = FeishuSender(build_client(feishu_settings(fake_api)))
    assert await sender.bot_open_id()
