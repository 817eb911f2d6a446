"""Chinese names of the commands typed in the terminal chat (``/取消``, ``/帮助``) are the
commands, answered in Chinese; ``/取消订单`` is a request for the agent."""

from __future__ import annotations

from clarigate.adapters.console.receive import is_quit
from clarigate.agent.protocol.catalog.command_words import aliases_line

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
    assert (
        "也可以输入中文命令：/新对话，/重新开始，/取消，/状态，/帮助，/退出" in out
    )  # the terminal's /退出 too
    assert bot.agent.calls == []  # never a request


def test_a_longer_word_starting_with_an_alias_is_a_request(bot: Bot) -> None:
    out = bot.chat("/取消订单")

    assert "bot> You said: /取消订单" in out


def test_tuichu_leaves_the_chat_like_quit(bot: Bot) -> None:
    bot.chat("/退出", "still here?")

    assert bot.agent.calls == []  # never a request, and nothing read after it


def test_the_chinese_help_lists_tuichu_with_the_other_chinese_names() -> None:
    line = aliases_line("zh", lambda name: f"/{name}", extra=("quit",))

    assert line == ["也可以输入中文命令：/新对话，/重新开始，/取消，/状态，/帮助，/退出"]
    assert "/退出" not in aliases_line("zh", lambda name: f"/{name}")[0]  # where there is no /quit
    assert aliases_line("en", lambda name: f"/{name}", extra=("quit",)) == []


def test_quit_by_any_of_its_names_and_nothing_longer() -> None:
    assert all(is_quit(line) for line in ("/quit", "/退出", "／退出", "/退出。", "/QUIT"))
    assert not any(is_quit(line) for line in ("/退出登录", "/quitting", "退出", "/"))
