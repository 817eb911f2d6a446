"""``/取消`` typed in a Telegram private chat (text: Telegram's commands are ASCII) closes a question
the agent asked in English, and the follow-up run goes on in Chinese, the person's language, even
where their Telegram is set to English: the agent hears Chinese and the demo answers in it, after
the cancel's own line."""

from __future__ import annotations

from typing import Any

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import AgentSettings, TurnOutput
from clarigate.gateway.runners.in_process import LangGraphRunner

from .harness import ALICE, message_update

#: Alice, whose Telegram interface is in English.
ENGLISH_ALICE = {**ALICE, "language_code": "en"}


def _script(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(choice_request("Which database?", ["PostgreSQL", "SQLite"]))
    return TurnOutput(replies=["ok"])


def _texts(bot_api: Any) -> list[str]:
    return [call.params["text"] for call in bot_api.of("sendMessage")]


async def test_quxiao_of_an_english_question_tells_the_agent_in_chinese(bench: Any, bot_api: Any) -> None:
    runner = ScriptedRunner(_script)
    tg = await bench(runner)
    await tg.deliver(message_update("which database?", user=ENGLISH_ALICE))
    await tg.deliver(message_update("/取消", user=ENGLISH_ALICE))

    assert "✖ 已取消问题「Which database?」" in _texts(bot_api)[-2]
    followup = runner.calls[-1]
    assert followup.response is not None and followup.response.response_kind == "declined"
    assert followup.text.startswith("对于您的澄清问题「Which database?」，我选择不回答。")
    assert followup.speaker is not None and followup.speaker["sender"]["locale"] == "zh"


async def test_the_demo_answers_a_quxiao_in_chinese(bench: Any, bot_api: Any) -> None:
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://"))
    try:
        tg = await bench(runner)
        await tg.deliver(message_update("delete the test data", user=ENGLISH_ALICE))
        assert "Delete the test data?" in _texts(bot_api)[-1]
        await tg.deliver(message_update("/取消", user=ENGLISH_ALICE))

        said = _texts(bot_api)
        cancelled = next(i for i, text in enumerate(said) if text.startswith("✖ 已取消问题「"))
        assert any(text.startswith("好的，测试数据保持不变。") for text in said[cancelled + 1 :]), said
        assert not any("Understood" in text for text in said)
    finally:
        await runner.aclose()
