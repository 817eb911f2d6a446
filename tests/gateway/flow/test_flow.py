"""The basic flow through the in-memory platform: a message in, one reply out, on one agent thread."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerStatus, Sender
from clarigate.gateway.boundary.outbound_items import ProgressUpdate
from clarigate.gateway.store.base import Store


async def test_message_gets_one_reply_with_progress_around_it(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    assert await chat.say("hello") is AcceptOutcome.ACCEPTED
    await gateway.drain()

    kinds = [(item.kind, getattr(item, "state", None)) for _, item in chat.sent]
    assert kinds == [("progress", "started"), ("progress", "done"), ("text", None)]
    done = chat.sent[1][1]
    assert isinstance(done, ProgressUpdate) and done.ref is not None and done.ref == chat.refs[0]
    assert chat.texts() == ["You said: hello"]
    assert [c.text for c in runner.calls] == ["hello"]


async def test_direct_chat_is_one_agent_thread_and_new_starts_another(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("one")
    await chat.say("two")
    await gateway.drain()
    await chat.say("/new")
    await chat.say("three")
    await gateway.drain()

    threads = [c.thread_id for c in runner.calls]
    assert [c.text for c in runner.calls] == ["one", "two", "three"]
    assert threads[0] == threads[1] != threads[2]
    assert "new conversation" in chat.texts()[2]


async def test_channel_threads_are_separate_agent_threads(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say("a", chat="general", topic="t1", direct=False)
    await chat.say("b", chat="general", topic="t2", direct=False)
    await chat.say("c", chat="general", topic="t1", direct=False)
    await gateway.drain()

    by_text = {c.text: c.thread_id for c in runner.calls}
    assert by_text["a"] == by_text["c"] != by_text["b"]
    assert await gateway.knows_conversation(chat.conversation("general", "t1", direct=False))
    assert not await gateway.knows_conversation(chat.conversation("general", "t9", direct=False))


async def test_empty_message_is_ignored(store: Store, make_gateway):
    gateway, chat = await make_gateway(store)
    assert await chat.say("   ") is AcceptOutcome.IGNORED
    await gateway.drain()
    assert chat.sent == []


async def test_a_failing_run_gives_a_short_error_and_the_next_message_still_runs(store: Store, make_gateway):
    def script(turn):
        if turn.text == "crash":
            raise RuntimeError("model provider returned 500")
        return TurnOutput(replies=["fine"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script))
    await chat.say("crash")
    await chat.say("again")
    await gateway.drain()

    errors = chat.of_kind("error")
    assert len(errors) == 1 and "went wrong" in errors[0].text and "500" not in errors[0].text
    assert chat.texts() == [errors[0].text, "fine"]


class SlackLike(TestAdapter):
    """The in-memory platform under Slack's name, so the ``slack`` section's allowlists apply."""

    platform = "slack"


async def test_strangers_are_refused_once_and_nothing_runs(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(
        store, runner, adapter_class=SlackLike, slack={"allowed_users": ["boss"]}
    )

    assert await chat.say("hi", user="stranger") is AcceptOutcome.REFUSED
    assert await chat.say("hi again", user="stranger") is AcceptOutcome.REFUSED
    assert await chat.say("hello", user="boss") is AcceptOutcome.ACCEPTED
    await gateway.drain()

    refusals = chat.of_kind("error")
    assert len(refusals) == 1 and "not set up to work with you" in refusals[0].text
    assert [c.text for c in runner.calls] == ["hello"]


async def test_chat_allowlist_refuses_other_chats(store: Store, make_gateway):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(
        store, runner, adapter_class=SlackLike, slack={"allowed_chats": ["team"]}
    )

    assert await chat.say("x", chat="elsewhere") is AcceptOutcome.REFUSED
    assert await chat.say("y", chat="team") is AcceptOutcome.ACCEPTED
    await gateway.drain()
    assert [c.text for c in runner.calls] == ["y"]


async def test_a_run_past_its_time_limit_is_stopped_and_the_chat_told(store: Store, make_gateway):
    forever = asyncio.Event()

    async def script(turn):
        if turn.text == "endless":
            await forever.wait()
        return TurnOutput(replies=["quick"])

    gateway, chat = await make_gateway(store, ScriptedRunner(script), run_timeout_seconds=0.2)
    await chat.say("endless")
    await chat.say("short one")
    await gateway.drain()

    assert chat.texts()[0].startswith("Sorry, that took too long")
    assert chat.texts()[1:] == ["quick"]


async def test_the_allowlist_also_holds_for_answers(store: Store, make_gateway):
    question = choice_request("Ship it?", ["yes", "no"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["ok"])
    )
    gateway, chat = await make_gateway(
        store, runner, adapter_class=SlackLike, answer_policy="anyone", slack={"allowed_users": ["boss"]}
    )
    await chat.say("release", user="boss", chat="team", direct=False)
    await gateway.drain()

    view = await gateway.pending_by_token(chat.last_request().token)
    assert (await gateway.may_answer(view, Sender(user_id="stranger"))).status is AnswerStatus.NOT_ALLOWED
    outsider = await chat.click(0, user="stranger")
    assert outsider.status is AnswerStatus.NOT_ALLOWED
    assert (await chat.click(0, user="boss")).status is AnswerStatus.ACCEPTED
    await gateway.drain()
    assert len(runner.calls) == 2


async def test_the_gateways_own_messages_follow_the_persons_language(store: Store, make_gateway):
    def script(turn):
        raise RuntimeError("model provider returned 500")

    gateway, chat = await make_gateway(
        store, ScriptedRunner(script), adapter_class=SlackLike, slack={"allowed_users": ["boss"]}
    )
    await chat.say("帮我部署一下", user="boss")
    await chat.say("deploy it", user="boss", chat="c2")
    await chat.say("你好", user="stranger", chat="c3")
    await gateway.drain()

    assert chat.texts("c1") == ["抱歉，我这边出了问题，没能完成。请再试一次。"]
    assert chat.texts("c2")[0].startswith("Sorry, I could not finish that")
    assert chat.texts("c3") == ["抱歉，我在这里无法为您服务。请联系机器人的管理员开通权限。"]
