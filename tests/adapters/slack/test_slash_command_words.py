"""``/clarigate`` as people type it: sentence punctuation after the command's name (README:
"sentence punctuation (/cancel。, /new!)" is accepted), and the person's Slack language for a
command whose words and conversation give none (README, /help: "else their app's"). The real
adapter against the fake Slack, the real core with a scripted agent."""

from __future__ import annotations

import json

import pytest

from clarigate.adapters.slack.commands import neutral_command
from clarigate.adapters.testing import ScriptedRunner, choice_request

from .conftest import MakeWorld
from .test_agent_view import AGENT, home_opened
from .test_conversation_control import asks, spy_on_core


@pytest.mark.parametrize(
    ("typed", "neutral"),
    [
        ("cancel.", "/cancel"),
        ("new!", "/new"),
        ("Status？", "/status"),
        ("help。", "/help"),
        ("new! a fresh start", "/new a fresh start"),
        ("cancel.txt", "/help"),  # a file name, not a command
    ],
)
def test_a_slash_commands_name_may_end_a_sentence(typed: str, neutral: str) -> None:
    assert neutral_command(typed) == neutral


async def test_slash_clarigate_cancel_with_a_full_stop_dismisses_the_question_in_a_dm(make_world: MakeWorld):
    runner = ScriptedRunner(asks(choice_request("Which framework?", ["React", "Vue"])))
    world = await make_world(runner)
    await world.user.dm("build")
    await world.settle()
    question = world.fake.posted()

    await world.user.slash_command("cancel.")
    await world.settle()

    posted = json.dumps(world.fake.of("chat.postMessage"), ensure_ascii=False)
    assert world.fake.edits(question["ts"]), f"the question was not closed; the bot said: {posted[-400:]}"
    assert runner.calls[-1].response is not None and runner.calls[-1].response.response_kind == "declined"


async def test_slash_clarigate_new_with_an_exclamation_mark_starts_afresh(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    await world.user.dm("first")
    await world.settle()
    await world.user.slash_command("new!")
    await world.settle()
    await world.user.dm("second")
    await world.settle()
    assert runner.calls[0].thread_id != runner.calls[1].thread_id


async def test_in_the_agent_dm_cancel_with_a_full_stop_says_to_type_it_in_the_thread(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(), slack=AGENT)
    messages, _ = spy_on_core(world)
    said = (await world.user.slash_hint("cancel."))["text"]
    assert said.startswith("Nothing was done: a command acts on one conversation,")
    assert "<@U0BOT> cancel" in said and messages == []
    assert said.endswith(" Every question also has its own Cancel button.")  # approvals too


async def test_help_as_first_words_follows_the_persons_slack_language(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")
    # README: /help answers "in the person's language (the words after the command, else the open
    # question's language, else that of the last request ..., else their app's)"
    await world.user.slash_command("help", user="U7", channel="D7")
    await world.settle()
    text = world.fake.posted()["text"]
    assert text.startswith("直接告诉我您需要什么。"), text[:80]
    assert "/clarigate cancel — 取消待回答的问题，或停止进行中的请求" in text.splitlines()


async def test_the_words_typed_outweigh_the_slack_language(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")
    await world.user.dm("write the weekly report", user="U7", channel="D7")
    await world.settle()
    await world.user.slash_command("status", user="U7", channel="D7")
    await world.settle()
    # the last request was English: so is the answer
    assert world.fake.posted()["text"].startswith("Where this conversation stands:")
    assert world.runner.calls[-1].speaker["sender"]["locale"] is None  # README: Slack gives none


async def test_the_agent_dm_hint_uses_a_language_known_without_asking_before_the_ack(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")
    await world.user.event(home_opened(user="U7", channel="D7"))  # the agent opened: language asked
    await world.settle()
    asked = len(world.fake.attempts("users.info"))
    response = await world.user.slash_command("help", user="U7", channel="D7")
    after = response.json()["text"]  # known: in the ack itself, Slack not asked again
    assert (
        after.startswith("直接告诉我您需要什么。")
        and "<@U0BOT> cancel — 取消待回答的问题，或停止进行中的请求" in after.splitlines()
    )
    assert len(world.fake.attempts("users.info")) == asked


async def test_a_zh_persons_first_channel_hint_is_in_chinese(make_world: MakeWorld):
    """The first ``/clarigate cancel`` a zh-CN person types in a channel, their language not yet
    known: the ack waits for no lookup and says nothing; the hint follows through the command's
    ``response_url`` once ``users.info`` (``include_locale``, ``user.locale``) tells the language."""
    world = await make_world()
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")
    response = await world.user.slash_command("cancel", user="U7", channel="C5")
    assert response.status_code == 200 and not response.content  # nothing waited for, nothing shown
    await world.settle()
    hint = world.fake.responses[-1]
    assert hint["response_type"] == "ephemeral", hint  # for the person who typed it only
    assert hint["text"].startswith("在频道中，请在对话的话题里给我发消息：<@U0BOT> new"), hint["text"][:60]
    assert world.fake.people_asked() == ["U7"]
    again = await world.user.slash_command("status", user="U7", channel="C5")  # known now: in the ack
    assert again.json()["text"].startswith("在频道中"), again.text[:60]
    assert world.fake.people_asked() == ["U7"]  # asked once an hour
