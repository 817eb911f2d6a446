"""``/help``, ``/start`` and ``/status``: answered by the gateway, at once, in the person's language."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol.catalog import text as notice
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.redis import RedisStore

FRAMEWORK = choice_request("Which framework should the shop use?", ["React", "Vue"])


async def test_help_lists_the_commands_and_never_reaches_the_agent(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("/help")
    await gateway.drain()

    [text] = chat.texts()
    assert text.startswith("Just write what you need.")
    for line in (
        "/new — start a new conversation",
        "/cancel — dismiss the open question, or stop the request in progress",
        "/status — what I am doing in this chat",
        "/help — how to talk to me, and the commands",
    ):
        assert line in text
    assert runner.calls == []


async def test_help_follows_the_persons_language(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)

    await chat.say("/help", language="zh-hans")
    await chat.say("/help 怎么用", chat="c2")
    await chat.say("/help", chat="c3", language="en-US")
    await gateway.drain()

    assert chat.texts("c1")[0].startswith("直接告诉我您需要什么。")
    assert "/cancel — 取消待回答的问题，或停止进行中的请求" in chat.texts("c1")[0]
    assert chat.texts("c2")[0].startswith("直接告诉我您需要什么。")
    assert chat.texts("c3")[0].startswith("Just write what you need.")


async def test_a_full_width_slash_command_follows_the_persons_language_too(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)

    await chat.say("／help", language="zh-hans")  # what a Chinese input method types
    await chat.say("／status", chat="c2", language="zh-hans")
    await gateway.drain()

    assert chat.texts("c1")[0].startswith("直接告诉我您需要什么。")
    assert chat.texts("c2")[0].startswith(notice("status_title", "zh"))


class SlashCommandAdapter(TestAdapter):
    """A platform whose commands are typed as ``/clarigate cancel`` (Slack's slash command)."""

    command_syntax: ClassVar[str] = "/clarigate {command}"


async def test_help_spells_commands_the_way_the_platform_does(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, adapter_class=SlashCommandAdapter)

    await chat.say("/help")
    await gateway.drain()

    assert "/clarigate cancel — dismiss the open question, or stop the request in progress" in chat.texts()[0]


async def test_start_greets_and_explains(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("/start ref-campaign-42")  # a Telegram deep link's payload
    await gateway.drain()

    [text] = chat.texts()
    assert text.startswith("👋 Hi!") and "/status — " in text
    assert runner.calls == []


async def test_status_without_a_conversation(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)

    await chat.say("/status")
    await gateway.drain()

    assert chat.texts() == [
        "Where this conversation stands:\n"
        "• No open question.\n"
        "• Nothing running or waiting.\n"
        "• No conversation yet: send a message to start one.\n"
        "• Answered by: default (model offline)."
    ]
    assert not await gateway.knows_conversation(chat.conversation())


async def test_status_quotes_the_open_question_and_tells_the_threads_age(store: Store, make_gateway):
    def script(turn: Turn) -> TurnOutput:
        return asking(FRAMEWORK)

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    await chat.say("build a shop")
    await gateway.drain()

    await chat.say("/status")
    await gateway.drain()

    lines = chat.texts()[-1].splitlines()
    assert lines[1].startswith("• Waiting for an answer to “Which framework should the shop use?” (asked ")
    assert lines[2] == "• Nothing running or waiting."
    assert lines[3].startswith("• This conversation started ") and lines[3].endswith(
        " ago; /new starts a fresh one."
    )
    assert (await gateway.pending_by_token(chat.last_request().token)).status == "pending"


async def test_status_names_who_is_asked_when_it_is_someone_else(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner(lambda turn: asking(FRAMEWORK)))
    room = {"chat": "room", "topic": "t", "direct": False}
    await chat.say("build a shop", user="ann", name="Ann", **room)
    await gateway.drain()

    await chat.say("/status", user="bob", **room)
    await gateway.drain()

    assert "• Waiting for Ann to answer “Which framework" in chat.texts("room")[-1]


async def test_status_and_cancel_answer_while_a_long_run_goes_on(store: Store, make_gateway):
    started, release = asyncio.Event(), asyncio.Event()

    async def script(turn: Turn) -> TurnOutput:
        started.set()
        await release.wait()
        return TurnOutput(replies=[f"done: {turn.text}"])

    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    two_texts = asyncio.Event()
    send = chat.send

    async def recording_send(conv, item):
        ref = await send(conv, item)
        if len(chat.texts()) >= 2:
            two_texts.set()
        return ref

    chat.send = recording_send  # type: ignore[method-assign]
    await chat.say("a long task")
    await asyncio.wait_for(started.wait(), 5)
    await chat.say("and one more thing")

    await chat.say("/status")
    await chat.say("/cancel")
    await asyncio.wait_for(two_texts.wait(), 5)  # both answered while the run still goes on

    status, stopped = chat.texts()[:2]  # no question open: the run stops, its line the answer
    assert "• Messages being worked on or waiting: 2." in status
    assert stopped == "■ Stopped. What was already done stays done."
    release.set()  # for the next message
    await gateway.drain()
    assert chat.texts()[2:] == ["done: and one more thing"]


async def test_cancel_with_nothing_running_says_there_is_nothing_to_cancel(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)
    await chat.say("/cancel")
    await gateway.drain()
    assert chat.texts() == ["There is no open question to cancel."]


async def test_a_repeated_delivery_of_a_command_is_answered_once(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)

    await chat.say("/help", event_id="same")
    await chat.say("/help", event_id="same")
    await gateway.drain()

    assert len(chat.texts()) == 1


async def test_an_unknown_slash_word_goes_to_the_agent(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("/deploy the docs")
    await gateway.drain()

    assert [c.text for c in runner.calls] == ["/deploy the docs"]


async def test_help_and_status_follow_the_language_the_person_last_wrote_in(store: Store, make_gateway):
    gateway, chat = await make_gateway(store, ScriptedRunner())

    await chat.say("帮我写一份周报")
    await gateway.drain()
    await chat.say("/help")
    await chat.say("/status")
    await gateway.drain()
    assert chat.texts()[-2].startswith("直接告诉我您需要什么。")
    assert "/new — 开始新的对话（关闭当前问题）" in chat.texts()[-2]
    assert chat.texts()[-1].startswith("当前对话状态：")

    await chat.say("/help", user="u2")  # someone else in the chat has written nothing yet
    await gateway.drain()
    assert chat.texts()[-1].startswith("Just write what you need.")

    await chat.say("Now write it in English please")
    await gateway.drain()
    await chat.say("/new")
    await gateway.drain()
    assert chat.texts()[-1] == "Started a new conversation. What can I do for you?"


async def test_the_language_a_person_writes_in_is_kept_with_a_ttl(store: Store, make_gateway, redis_url: str):
    gateway, chat = await make_gateway(store, ScriptedRunner(), thread_ttl_seconds=3600)

    await chat.say("帮我写一份周报", chat="c9", user="u7")
    await gateway.drain()

    key = f"locale:{chat.conversation('c9').thread_key}:u7"
    assert await store.get_json(key) == "zh"
    if isinstance(store, RedisStore):  # what an operator sees: a state key that expires with the thread
        client = Redis.from_url(redis_url, decode_responses=True)
        try:
            name = f"{store.keys.prefix}:state:{key}"
            assert await client.get(name) == '"zh"'
            assert 3500 < await client.ttl(name) <= 3600
        finally:
            await client.aclose()
