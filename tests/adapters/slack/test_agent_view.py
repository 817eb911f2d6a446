"""Slack's agent messaging experience (``slack.agent_view: true``): each conversation a thread of
the DM, a loading status while a run works, a title, suggested prompts, commands typed in the
thread (a slash command names none); the classic bot unchanged.

Real Bolt, the real core and the real slack_sdk against the fake Web API (``fake_agent.py``
answers ``assistant.threads.*`` as Slack documents them).
"""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.tools import tool
from pydantic import ValidationError

from clarigate.adapters.slack.settings import SlackSettings
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput

from ..emoji_text import AT_THE_CUT
from .conftest import MakeWorld
from .fake_slack import TEAM_ID
from .test_conversation_control import spy_on_core
from .test_live_replies import scripted_agent, slowly

AGENT = {"agent_view": True}
STATUS = "assistant.threads.setStatus"
PROMPTS = "assistant.threads.setSuggestedPrompts"
ASSISTANT = {STATUS, PROMPTS, "assistant.threads.setTitle"}


def home_opened(user: str = "U1", channel: str = "D1", tab: str = "messages") -> dict:
    """The ``app_home_opened`` event of a person opening the app (its messages tab: the agent)."""
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": channel,
        "tab": tab,
        "event_ts": "1800000000.1",
    }


async def test_an_agent_dm_shows_a_status_while_the_run_works_then_the_reply_in_its_thread(
    make_world: MakeWorld,
):
    async def slow(turn):
        await asyncio.sleep(0.3)
        return TurnOutput(replies=[f"You said: {turn.text}"])

    for streaming in ("auto", "off"):
        world = await make_world(ScriptedRunner(slow), slack=AGENT, streaming=streaming)
        world.fake.calls.clear()
        world.fake.agent.status_calls.clear()
        channel = f"D{streaming}"
        _, ts = await world.user.dm("plan the deploy of the docs site\nwith a canary", channel=channel)
        await world.settle()

        set_on, cleared = world.fake.agent.status_calls
        assert set_on == (channel, ts, "is working on it…") and cleared == (channel, ts, "")
        (status,) = [c for c in world.fake.of(STATUS) if c["status"]]
        assert status["loading_messages"][:2] == ["Reading your message…", "Thinking it over…"]
        assert world.fake.agent.statuses == {}  # cleared when the reply came
        (reply,) = world.fake.shown()  # no "Working…" message: the status stood for it
        assert reply["thread_ts"] == ts and reply["text"].startswith("You said: plan the deploy")
        assert world.fake.agent.titles[(channel, ts)] == "plan the deploy of the docs site"
        # the status was cleared before the reply was posted
        methods = [c.method for c in world.fake.calls if c.method in (STATUS, "chat.postMessage")]
        assert methods == [STATUS, STATUS, "chat.postMessage"]


@pytest.mark.parametrize("emoji", AT_THE_CUT)
async def test_a_long_first_request_titles_its_thread_without_splitting_a_character(
    make_world: MakeWorld, emoji: str
):
    world = await make_world(slack=AGENT)
    request = "x" * 58 + emoji + " and the rest of the request"  # the 60-character cut lands inside it
    _, ts = await world.user.dm(request)
    await world.settle()

    title = world.fake.agent.titles[("D1", ts)]
    assert title == "x" * 58 + "…"  # the character left out whole, not half of it shown


async def test_a_reply_in_an_agent_thread_continues_it_without_a_new_title(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    _, first = await world.user.dm("first request")
    await world.settle()
    await world.user.dm("and then?", thread_ts=first)
    await world.settle()

    first_run, second_run = world.runner.calls
    assert first_run.thread_id == second_run.thread_id  # one agent thread per Slack thread
    assert [m["thread_ts"] for m in world.fake.shown()] == [first, first]
    assert world.fake.agent.titles == {("D1", first): "first request"}
    await world.user.dm("something else")
    await world.settle()
    assert world.runner.calls[-1].thread_id != first_run.thread_id  # a new top-level message: a new thread


async def test_a_title_names_people_as_slack_shows_them(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    world.fake.add_user("U7", display_name="Li", locale="en-US")  # not known yet: asked after the ack
    _, ts = await world.user.dm("ask <@U7> about the deploy")
    await world.settle()
    assert world.runner.calls[-1].text == "ask @Li about the deploy"  # the agent saw the name
    assert world.fake.agent.titles[("D1", ts)] == "ask @Li about the deploy"  # and so does the list


@pytest.mark.parametrize("command", ["help", "new", "status", "cancel"])
async def test_a_command_as_first_message_is_not_a_title(make_world: MakeWorld, command: str):
    world = await make_world(slack=AGENT)
    _, ts = await world.user.dm(f"<@U0BOT> {command}")
    await world.settle()
    assert world.fake.agent.titles == {}
    _, later = await world.user.dm("plan the deploy")  # a request still titles its thread
    await world.settle()
    assert world.fake.agent.titles == {("D1", later): "plan the deploy"}


async def test_a_question_in_an_agent_thread_clears_the_status_and_is_answerable(make_world: MakeWorld):
    def ask(turn):
        if turn.response is None:
            return TurnOutput(request=choice_request("Which region?", ["eu", "us"]))
        return TurnOutput(replies=[f"Deploying: {turn.text}"])

    world = await make_world(ScriptedRunner(ask), slack=AGENT)
    _, ts = await world.user.dm("deploy it")
    await world.settle()

    assert world.fake.agent.statuses == {}
    question = world.fake.posted()
    assert question["thread_ts"] == ts and question["channel"] == "D1"
    button = next(e for b in question["blocks"] for e in b.get("elements", []) if e.get("type") == "button")
    await world.user.click(question, button["action_id"])
    await world.settle()
    assert world.fake.shown()[-1]["text"].startswith("Deploying:") and "eu" in world.runner.calls[-1].text
    assert world.fake.shown()[-1]["thread_ts"] == ts


async def test_opening_the_agent_offers_the_yaml_prompts_in_the_persons_language(make_world: MakeWorld):
    prompts = [
        {
            "title": {"en": "Plan a deploy", "zh": "计划部署"},
            "message": {"en": "Plan a deploy", "zh": "帮我计划部署"},
        },
        {"title": "Status", "message": "What is running now?"},
    ]
    world = await make_world(slack={**AGENT, "suggested_prompts": prompts})
    world.fake.add_user("U7", display_name="Li", locale="zh-CN")
    assert (await world.user.event(home_opened(user="U7", channel="D7"))).status_code == 200
    await world.settle()

    (call,) = world.fake.of(PROMPTS)
    assert "thread_ts" not in call  # an agent app's call naming a thread is ignored by Slack
    shown = world.fake.agent.prompts["D7"]
    assert shown["title"] == "可以这样问我"
    assert shown["prompts"] == [
        {"title": "计划部署", "message": "帮我计划部署"},
        {"title": "Status", "message": "What is running now?"},
    ]


async def test_without_yaml_prompts_the_catalogs_prompt_is_offered_in_english_by_default(
    make_world: MakeWorld,
):
    world = await make_world(slack=AGENT)
    await world.user.event(home_opened(user="U_UNKNOWN"))  # users.info does not know them: English
    await world.user.event(home_opened(tab="home"))  # the Home tab: nothing to offer there
    await world.settle()

    assert world.fake.agent.prompts == {
        "D1": {
            "title": "Try asking",
            "prompts": [
                {"title": "What can you do?", "message": "What can you help me with, and how do I ask?"}
            ],
        }
    }


async def test_context_changes_are_acknowledged_and_not_told_to_the_agent(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    event = {
        "type": "app_context_changed",
        "user": "U1",
        "event_ts": "1800000000.2",
        "context": {"entities": [{"type": "slack#/types/channel_id", "value": "C9", "team_id": TEAM_ID}]},
    }
    assert (await world.user.event(event)).status_code == 200
    await world.settle()
    asked = {c.method for c in world.fake.calls}
    assert world.runner.calls == [] and asked == {"auth.test", "users.info"}  # both at start
    assert world.fake.people_asked() == []  # the bot's own name only


async def test_a_failing_status_call_does_not_stop_the_reply(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    world.fake.refuse_every("missing_scope", {STATUS, "assistant.threads.setTitle"})
    _, ts = await world.user.dm("hello")
    await world.settle()
    (reply,) = world.fake.shown()
    assert reply["text"] == "You said: hello" and reply["thread_ts"] == ts


async def test_the_classic_bot_is_unchanged_without_the_agent_view(make_world: MakeWorld):
    world = await make_world()  # slack.agent_view: false (the default)
    _, ts = await world.user.dm("hello")
    await world.user.event(home_opened())
    await world.settle()

    assert not any(c.method in ASSISTANT for c in world.fake.calls)
    working, *_ = world.fake.of("chat.postMessage")
    assert working["text"] == "⏳ _Working…_" and "thread_ts" not in working  # a top-level DM, as always
    (reply,) = world.fake.shown()
    assert reply["text"] == "You said: hello" and "thread_ts" not in reply


async def test_in_an_agent_thread_a_tool_step_ends_the_status_and_the_stream_shows_the_steps(
    make_world: MakeWorld, tmp_path
):
    @tool
    async def search_docs(query: str) -> str:
        """Searching the docs. Looks the query up in the team's documentation."""
        await asyncio.sleep(1.2)
        return "the guide, page 4"

    turns = [
        {
            "content": "",
            "tool_calls": [{"name": "search_docs", "args": {"query": "deploy"}}],
            "delay_seconds": 0.5,
        },
        slowly("It is in the guide, on page 4.", 1.0),
    ]
    async with scripted_agent(tmp_path, turns, [search_docs]) as agent:
        world = await make_world(agent, slack=AGENT)
        _, ts = await world.user.dm("where is the deploy documented?")
        await world.settle()

    assert world.fake.agent.status_calls == [("D1", ts, "is working on it…"), ("D1", ts, "")]
    (start,) = world.fake.of("chat.startStream")
    assert start["thread_ts"] == ts and start["task_display_mode"] == "timeline"
    tasks = [
        c
        for call in world.fake.streamed()
        for c in call.params.get("chunks", [])
        if c["type"] == "task_update"
    ]
    assert {(t["title"], t["status"]) for t in tasks} >= {
        ("Searching the docs…", "in_progress"),
        ("Searching the docs…", "complete"),
    }
    (reply,) = world.fake.shown()
    assert reply["text"] == "It is in the guide, on page 4." and reply["thread_ts"] == ts


def test_more_than_four_suggested_prompts_are_refused_when_the_settings_are_read():
    prompt = {"title": "Status", "message": "What is running?"}
    assert len(SlackSettings(suggested_prompts=[prompt] * 4).suggested_prompts) == 4
    with pytest.raises(ValidationError):
        SlackSettings(suggested_prompts=[prompt] * 5)


async def test_a_long_first_request_gives_a_short_title(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    _, ts = await world.user.dm(
        "\n  " + "please look into why the nightly deploy of the docs site failed twice " * 3
    )
    await world.settle()
    title = world.fake.agent.titles[("D1", ts)]
    assert len(title) == 60 and title.startswith("please look into why") and title.endswith("…")


def _deploy(turn: Turn) -> TurnOutput:
    if turn.response is None:
        return asking(choice_request("Which environment?", ["staging", "production"]))
    return TurnOutput(replies=[f"Deploying to {turn.response.value}."])


@pytest.mark.parametrize("typed", ["cancel", "status", "new"])
async def test_a_slash_command_in_the_agent_dm_does_nothing_and_says_to_type_it_in_the_thread(
    make_world: MakeWorld, typed: str
):
    """Slack sends a slash command without its thread, and every conversation with an agent app is
    a thread of its DM: the command cannot say which one it is for. It is answered privately with
    the form typed in the thread, and the open question there stays as it was."""
    runner = ScriptedRunner(_deploy)
    world = await make_world(runner, slack=AGENT)
    messages, answers = spy_on_core(world)
    await world.user.dm("deploy the docs site")
    await world.settle()
    question = world.fake.posted()
    calls = len(world.fake.calls)

    response = await world.user.slash_command(typed)
    await world.settle()

    assert response.json()["response_type"] == "ephemeral"  # for the person who typed it only
    said = response.json()["text"]
    assert said.startswith("Nothing was done: a command acts on one conversation,")
    assert f"<@U0BOT> {typed}" in said and "/clarigate" not in said
    assert [m.text for m in messages] == ["deploy the docs site"] and answers == []  # the core: nothing
    assert world.fake.calls[calls:] == []  # nothing posted, the question not closed
    await world.user.click(question, "clarigate:o2")  # still open, on the same run
    await world.settle()
    assert [t.response.value for t in runner.calls if t.response is not None] == ["production"]


async def test_in_the_agent_dm_the_mention_typed_in_the_thread_cancels_its_question(make_world: MakeWorld):
    world = await make_world(ScriptedRunner(_deploy), slack=AGENT)
    _, thread = await world.user.dm("deploy the docs site")
    await world.settle()
    question = world.fake.posted()
    await world.user.dm("<@U0BOT> cancel", thread_ts=thread)
    await world.settle()
    closed = json.dumps(world.fake.edits(question["ts"])[-1]["blocks"], ensure_ascii=False)
    assert "✖ Cancelled by <@U1>" in closed
    said = [m for m in world.fake.of("chat.postMessage") if m["text"].startswith("✖ Cancelled the question")]
    assert [m["thread_ts"] for m in said] == [thread]


async def test_slash_help_in_the_agent_dm_lists_the_commands_as_typed_in_a_thread(make_world: MakeWorld):
    world = await make_world(slack=AGENT)
    messages, _ = spy_on_core(world)
    english = await world.user.slash_hint("help")  # after the ack: U1's language asked for first
    chinese = await world.user.slash_hint("帮助")  # unknown words ask for help too
    await world.settle()

    assert english["response_type"] == "ephemeral" and messages == []
    lines = english["text"].splitlines()
    assert lines[0].startswith("Just write what you need.")
    assert lines[2].startswith("Each conversation with me is a thread of its own")
    assert (
        "<@U0BOT> cancel — dismiss the open question, or stop the request in progress" in lines
        and "/clarigate" not in english["text"]
    )
    assert chinese["text"].startswith("直接告诉我您需要什么。")
    assert "<@U0BOT> cancel — 取消待回答的问题，或停止进行中的请求" in chinese["text"].splitlines()


async def until(condition, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Wait until ``condition()`` holds (the bot works on its own tasks)."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110
            await asyncio.sleep(0.02)


def renewals() -> list[asyncio.Task]:
    """The bot's tasks keeping a status up (none once its run is over)."""
    return [t for t in asyncio.all_tasks() if t.get_name() == "slack-status-renewal"]


@pytest.mark.parametrize("streaming", ["auto", "off"])
async def test_a_run_working_past_slacks_status_timeout_keeps_its_status(
    make_world: MakeWorld, streaming: str
):
    """Slack removes a status not renewed within two minutes (short here): the bot sets it again
    while the run works, so the person still sees it working at the end of a long run."""
    seen: list[dict] = []

    async def long(turn):
        await asyncio.sleep(1.5)  # three of Slack's (shortened) timeouts, nothing streamed
        seen.append(dict(world.fake.agent.statuses))  # what the thread shows as the run ends
        return TurnOutput(replies=["Done."])

    world = await make_world(ScriptedRunner(long), slack=AGENT, streaming=streaming)
    world.fake.agent.status_timeout = 0.5
    world.adapter.agent.renew_every = 0.1
    _, ts = await world.user.dm("rebuild the search index")
    await world.settle()

    (shown,) = seen  # the thread still shows the run's status, loading messages and all
    assert shown[("D1", ts)]["status"] == "is working on it…"  # KeyError: Slack removed it
    assert "Reading your message…" in shown[("D1", ts)]["loading_messages"]  # where the rotation stood
    assert world.fake.agent.expired == []  # never removed by Slack's timeout
    assert world.fake.agent.statuses == {} and world.fake.shown()[-1]["text"] == "Done."
    set_again = [c for c in world.fake.agent.status_calls if c[2]]
    assert len(set_again) > 1 and world.fake.agent.status_calls[-1] == ("D1", ts, "")
    calls = len(world.fake.agent.status_calls)
    await asyncio.sleep(0.3)  # the run is over: nothing renews its status any more
    assert len(world.fake.agent.status_calls) == calls and not renewals()


async def test_the_bots_notice_mid_run_does_not_take_the_status_away(make_world: MakeWorld):
    """A message the app posts in the thread removes its status in Slack: after the bot's own
    notice (the ``status`` command's answer) while the run works, the status shows again."""
    go_on = asyncio.Event()

    async def working(turn):
        await go_on.wait()
        return TurnOutput(replies=["Done."])

    world = await make_world(ScriptedRunner(working), slack=AGENT)
    _, ts = await world.user.dm("rebuild the search index")
    await until(lambda: ("D1", ts) in world.fake.agent.statuses)
    await world.user.dm("<@U0BOT> status", thread_ts=ts)
    await until(lambda: any(p["text"].startswith("Where this conversation") for p in world.fake.shown()))
    notice = next(p for p in world.fake.shown() if p["text"].startswith("Where this conversation"))
    assert notice["thread_ts"] == ts

    await until(lambda: ("D1", ts) in world.fake.agent.statuses)  # set again after the notice
    assert world.fake.agent.statuses[("D1", ts)]["status"] == "is working on it…"
    go_on.set()
    await world.settle()
    assert world.fake.agent.statuses == {} and world.fake.shown()[-1]["text"] == "Done."
    assert not renewals()
