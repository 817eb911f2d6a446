"""Telegram marks only ``/[a-z0-9_]`` as bot commands, so ``/帮助`` is no ``bot_command`` and its
menu keeps the English names; typed as text in a private chat, the core reads it as ``/help``
(and answers in Chinese); ``/取消订单`` is a request."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .harness import message_update


async def test_bangzhu_typed_in_a_private_chat_is_the_help_in_chinese(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("/帮助"))  # no entity: Telegram's commands are ASCII

    assert tg.api.of("sendMessage")[-1].params["text"].startswith("直接告诉我您需要什么。")
    assert runner.calls == []


async def test_a_longer_word_starting_with_an_alias_is_a_request(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    await tg.deliver(message_update("/取消订单"))

    assert [call.text for call in runner.calls] == ["/取消订单"]
