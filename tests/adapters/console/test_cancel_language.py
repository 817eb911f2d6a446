"""A question cancelled in the person's own words, in the terminal chat: ``/取消`` of a question the
agent asked in English runs its follow-up in Chinese (the agent hears Chinese, the demo answers
in Chinese), as the person's answer would; ``/cancel`` of the same question stays English."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .console_bot import ConsoleBot
from .test_console import Bot


@pytest.fixture
def demo() -> Iterator[ConsoleBot]:
    """The terminal chat on the built-in agent and its offline demo model."""
    with asyncio.Runner() as runner:
        made = ConsoleBot(runner, LangGraphRunner(AgentSettings(checkpointer_url="memory://")))
        yield made
        runner.run(made.gateway.stop(grace=0))
        runner.run(made.agent.aclose())


def test_quxiao_of_an_english_question_tells_the_agent_in_chinese(bot: Bot) -> None:
    out = bot.chat("which database?", "/取消")

    assert "bot> ✖ 已取消问题「Which database?」" in out
    followup = bot.agent.calls[-1]
    assert followup.response is not None and followup.response.response_kind == "declined"
    assert followup.text.startswith("对于您的澄清问题「Which database?」，我选择不回答。")
    assert followup.speaker is not None and followup.speaker["sender"]["locale"] == "zh"


def test_cancel_of_an_english_question_tells_the_agent_in_english(bot: Bot) -> None:
    bot.chat("which database?", "/cancel")

    followup = bot.agent.calls[-1]
    assert followup.text.startswith('For your clarification "Which database?", I declined to answer.')
    assert followup.speaker is not None and followup.speaker["sender"]["locale"] == "en"


def test_the_demo_answers_a_quxiao_in_chinese_after_the_cancel_line(demo: ConsoleBot) -> None:
    out = demo.chat("delete the test data", "/取消")

    assert "Delete the test data?" in out  # asked in English
    cancelled, reply = out.index("bot> ✖ 已取消问题「"), out.index("好的，测试数据保持不变。")
    assert cancelled < reply
    assert "Understood" not in out[cancelled:]


def test_the_demo_answers_a_cancel_in_english(demo: ConsoleBot) -> None:
    out = demo.chat("delete the test data", "/cancel")

    cancelled = out.index("bot> ✖ Cancelled the question “")
    assert cancelled < out.index("Understood: I left the test data untouched.")
    assert "好的" not in out
