"""Chinese names of the commands on Slack: ``@clarigate 取消`` in a thread and ``/clarigate 帮助``
in a DM are the commands, answered in Chinese; ``@clarigate 取消订单`` is a request."""

from __future__ import annotations

import json

import pytest

from clarigate.adapters.slack.commands import mention_command, neutral_command
from clarigate.adapters.testing import ScriptedRunner

from .conftest import MakeWorld
from .test_threads_and_people import asks_on_build


@pytest.mark.parametrize(
    ("typed", "neutral"), [("取消", "/取消"), ("取消。", "/取消"), ("新对话", "/新对话"), ("帮助", "/帮助")]
)
def test_a_chinese_name_is_the_command(typed: str, neutral: str) -> None:
    assert mention_command(typed) == neutral
    assert neutral_command(typed) == neutral


def test_a_longer_word_is_no_command() -> None:
    assert mention_command("取消订单") is None
    assert neutral_command("取消订单") == "/help"


async def test_at_bot_quxiao_dismisses_the_question_in_chinese(make_world: MakeWorld) -> None:
    runner = ScriptedRunner(asks_on_build)
    world = await make_world(runner)
    _, ts = await world.user.mention("build", user="U1")
    await world.settle()
    question = world.fake.posted()

    await world.user.mention("取消", user="U1", thread_ts=ts)
    await world.settle()

    assert world.fake.edits(question["ts"]), "the question was not closed"
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"
    assert "已取消" in json.dumps(world.fake.of("chat.postMessage")[-1], ensure_ascii=False)


async def test_slash_clarigate_bangzhu_answers_the_help_in_chinese(make_world: MakeWorld) -> None:
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.slash_command("帮助")
    await world.settle()

    posted = json.dumps(world.fake.of("chat.postMessage"), ensure_ascii=False)
    assert "直接告诉我您需要什么" in posted and runner.calls == []
    assert "/clarigate 取消" in posted  # the Chinese names, as typed here


async def test_at_bot_quxiao_dingdan_is_a_request(make_world: MakeWorld) -> None:
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.mention("取消订单", user="U1")
    await world.settle()

    assert [call.text for call in runner.calls] == ["取消订单"]
