"""A Feishu message carries no language: the core's own words (help, status) follow what the
person wrote, else the app's domain: Feishu (open.feishu.cn, China) Chinese, Lark
(open.larksuite.com) English. The app is set up for that domain; its open API calls reach the
fake open API instead."""

from __future__ import annotations

import pytest

from clarigate.adapters.feishu import adapter
from clarigate.adapters.feishu.open_api import build_client
from clarigate.adapters.testing import ScriptedRunner

from .cards import text_of
from .events import message_event


@pytest.fixture
def routed_to_fake(fake_api, monkeypatch):
    """The open API client of an app set up for Feishu or Lark talks to the fake open API."""

    def to_fake(settings, *args, **kwargs):
        return build_client(settings.model_copy(update={"domain": fake_api.url}), *args, **kwargs)

    monkeypatch.setattr(adapter, "build_client", to_fake)


async def first_reply(make_bot, domain: str, text: str) -> str:
    bot = await make_bot(ScriptedRunner(), settings={"domain": domain})
    await bot.deliver(message_event(text))
    await bot.gateway.drain()
    return text_of(bot.api.shown()[-1])


async def test_a_first_help_on_feishu_is_in_chinese(routed_to_fake, make_bot):
    help_text = await first_reply(make_bot, "https://open.feishu.cn", "/help")
    assert help_text.startswith("直接告诉我您需要什么。")
    assert "/cancel — 取消待回答的问题，或停止进行中的请求" in help_text.splitlines()


async def test_a_first_help_on_lark_is_in_english(routed_to_fake, make_bot):
    help_text = await first_reply(make_bot, "https://open.larksuite.com", "/help")
    assert "/cancel — dismiss the open question, or stop the request in progress" in help_text.splitlines()


async def test_english_words_on_feishu_get_english(routed_to_fake, make_bot):
    help_text = await first_reply(make_bot, "https://open.feishu.cn", "/help how do I use this")
    assert "/cancel — dismiss the open question, or stop the request in progress" in help_text.splitlines()
