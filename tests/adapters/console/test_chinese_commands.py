"""Chinese names of the commands typed in the terminal chat (``/取消``, ``/帮助``) are the
commands, answered in Chinese; ``/取消订单`` is a request for the agent."""

from __future__ import annotations

from .test_console import Bot


def test_quxiao_in_a_form_declines_it(bot: Bot) -> None:
    out = bot.chat("create a project", "atlas", "/取消")

    assert "bot> ✖ 已取消问题「Tell me about the project.」" in out
    response = bot.agent.calls[-1].response
    assert response is not None and response.response_kind == "declined"
    assert bot.adapter.open is None


def test_bangzhu_answers_the_help_in_chinese(bot: Bot) -> None:
    out = bot.chat("/帮助")

    assert "直接告诉我您需要什么。" in out
    assert "/cancel — 取消待回答的问题，或停止进行中的请求" in out
    assert bot.agent.calls == []  # never a request


def test_a_longer_word_starting_with_an_alias_is_a_request(bot: Bot) -> None:
    out = bot.chat("/取消订单")

    assert "bot> You said: /取消订单" in out
