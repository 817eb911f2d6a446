"""Chinese names of the commands typed on Feishu (``/取消``, ``/帮助``, ``@bot /取消`` in a group)
are the commands, answered in Chinese; a longer word that starts with one (``/取消订单``) is a
request for the agent."""

from __future__ import annotations

from clarigate.adapters.testing import ScriptedRunner

from .cards import components, text_of
from .events import message_event
from .test_messages import agent


async def test_quxiao_dismisses_the_open_question_in_a_group_thread(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    group = {"chat": "oc_g", "chat_type": "group"}
    await bot.deliver(message_event("delete the test data", message_id="om_root", mention_bot=True, **group))
    await bot.gateway.drain()
    message_id = next(m for m, c in bot.api.cards.items() if "Delete 1,204 rows" in text_of(c))

    await bot.deliver(message_event("/取消。", root_id="om_root", mention_bot=True, **group))
    await bot.gateway.drain()

    assert not components(bot.api.cards[message_id], "button")
    assert bot.runner.calls[-1].response.response_kind == "declined"
    assert any("✖ 已取消问题" in text_of(m) for m in bot.api.shown())  # the reply, in its language


async def test_bangzhu_answers_the_help_in_chinese(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("/帮助"))
    await bot.gateway.drain()

    help_text = text_of(bot.api.shown()[-1])
    assert help_text.startswith("直接告诉我您需要什么。")
    assert "/cancel — 取消待回答的问题，或停止进行中的请求" in help_text.splitlines()
    assert "也可以输入中文命令：/新对话，/重新开始，/取消，/状态，/帮助" in help_text.splitlines()
    assert bot.runner.calls == []  # never a request


async def test_a_longer_word_starting_with_an_alias_is_a_request(make_bot):
    bot = await make_bot(ScriptedRunner(agent))
    await bot.deliver(message_event("/取消订单"))
    await bot.gateway.drain()

    assert [call.text for call in bot.runner.calls] == ["/取消订单"]
