"""Runs shown live on Slack: streamed in threads (Slack's chat stream), edited in top-level DMs.

Everything goes through Bolt, the real core and the real slack_sdk against the fake Web API,
with the in-process agent playing a script that writes slowly (``token_delay_seconds``).
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import yaml
from langchain_core.tools import tool

from clarigate.adapters.slack.live import EDIT, STREAM
from clarigate.adapters.slack.render import render_reply
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.gateway.boundary.messages import Conversation, MessageRef, Sender
from clarigate.gateway.boundary.outbound_items import LiveEnd, LiveView, TextReply
from clarigate.gateway.runners.in_process import LangGraphRunner

from .conftest import MakeWorld, SlackWorld
from .fake_slack import TEAM_ID, ApiCall

ANSWER = (
    "The deploy went **fine**: every check passed, the canary stayed green for ten minutes "
    "and the new version now serves all of the traffic in both regions."
)
STREAM_METHODS = {"chat.startStream", "chat.appendStream", "chat.stopStream"}
SHOWN_METHODS = {"chat.postMessage", "chat.update", *STREAM_METHODS}


@asynccontextmanager
async def scripted_agent(tmp_path: Path, turns: list[dict[str, Any]], tools: list[Any] | None = None):
    """The in-process agent playing ``turns`` (streaming its text word by word)."""
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump(turns))
    settings = AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://", data_dir=str(tmp_path))
    agent = await ClarifyingAgent.create(settings, tools=tools or [])
    try:
        yield LangGraphRunner(settings, agent=agent)
    finally:
        await agent.aclose()


def slowly(text: str, seconds: float) -> dict[str, Any]:
    """A script turn writing ``text`` over about ``seconds``."""
    return {"content": text, "token_delay_seconds": seconds / len(text.split(" "))}


def gaps(calls: list[ApiCall]) -> list[float]:
    return [b.at - a.at for a, b in zip(calls, calls[1:], strict=False)]


def streamed_text(world: SlackWorld) -> str:
    """The text the bot appended to its streams, in order."""
    appends = world.fake.of("chat.appendStream")
    return "".join(c["text"] for a in appends for c in a["chunks"] if c["type"] == "markdown_text")


def in_thread(thread: str, channel: str = "C1") -> Conversation:
    """A channel thread as the adapter names it."""
    return Conversation(platform="slack", workspace=TEAM_ID, chat_id=channel, topic=thread, reply_to=thread)


def live_calls(world: SlackWorld, ts: str) -> list[ApiCall]:
    """The successful calls that changed message ``ts`` after it was made."""
    return [
        c
        for c in world.fake.calls
        if c.method in ("chat.update", "chat.appendStream", "chat.stopStream")
        and c.params.get("ts") == ts
        and c.answer.get("ok")
    ]


async def test_a_dm_answer_is_posted_once_then_edited_about_once_a_second(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 3.0)]) as agent:
        world = await make_world(agent)
        await world.user.dm("how did the deploy go?")
        await world.settle()

    assert world.fake.streamed() == []  # a top-level DM has no thread to stream into
    (working,) = world.fake.of("chat.postMessage")
    assert working["text"] == "⏳ _Working…_" and "thread_ts" not in working  # as with streaming off
    ts = world.fake.posted()["ts"]
    edits = world.fake.edits(ts)
    partial = [e["text"] for e in edits[:-1]]
    assert len(partial) >= 2  # the answer grew in place, a second at a time
    grown = zip(partial, partial[1:], strict=False)
    assert all(a != b and ANSWER.replace("**", "*").startswith(a) for a, b in grown)
    assert all(gap >= 0.9 for gap in gaps(live_calls(world, ts)[:-1]))  # the reply's own edit ends it
    assert len(edits) <= 3.0 / 1.0 + 3  # bounded by time, not by the answer's words
    (shown,) = world.fake.shown()
    assert shown["text"] == render_reply(ANSWER)[0] and "*fine*" in shown["text"]
    assert [b["type"] for b in shown["blocks"]] == ["section", "context_actions"]  # the answer, 👍/👎


async def test_a_thread_answer_streams_to_the_person_and_ends_as_the_formatted_reply(
    make_world: MakeWorld, tmp_path
):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 3.0)]) as agent:
        world = await make_world(agent)
        _, thread = await world.user.mention("how did the deploy go?", user="U7")
        await world.settle()

    (start,) = world.fake.of("chat.startStream")
    assert start["channel"] == "C1" and start["thread_ts"] == thread
    assert (start["recipient_team_id"], start["recipient_user_id"]) == (TEAM_ID, "U7")
    ts = next(c.answer["ts"] for c in world.fake.calls if c.method == "chat.startStream")
    appends = world.fake.of("chat.appendStream")
    assert len(appends) >= 2 and len(appends) <= 3.0 / 1.0 + 2
    assert all(gap >= 0.9 for gap in gaps(live_calls(world, ts)[:-2]))  # the stop and update end it
    streamed = streamed_text(world)
    assert streamed and ANSWER.startswith(streamed)  # the model's Markdown, as Slack's stream takes it
    # "Working…" was its first task card, done once the answer began
    assert [c["title"] for c in start["chunks"]] == ["Working…"]
    done = {"type": "task_update", "id": "step-1", "title": "Working…", "status": "complete"}
    assert done in appends[0]["chunks"]
    # then the stream stopped and the message became the reply in mrkdwn, as a reply posted whole
    methods = [c.method for c in world.fake.calls if c.method in SHOWN_METHODS and c.params.get("ts") == ts]
    assert methods[-2:] == ["chat.stopStream", "chat.update"]
    (shown,) = world.fake.shown()
    assert shown["text"] == render_reply(ANSWER)[0] and not shown["streaming"]
    assert world.fake.of("chat.postMessage") == [] and world.fake.of("chat.delete") == []


async def test_a_tool_step_shows_while_it_runs(make_world: MakeWorld, tmp_path):
    @tool
    async def search_docs(query: str) -> str:
        """Searching the docs. Looks the query up in the team's documentation."""
        await asyncio.sleep(1.6)
        return "the guide, page 4"

    turns = [
        {"content": "", "tool_calls": [{"name": "search_docs", "args": {"query": "deploy"}}]},
        slowly("It is in the guide, on page 4.", 1.0),
    ]
    async with scripted_agent(tmp_path, turns, [search_docs]) as agent:
        world = await make_world(agent)
        await world.user.mention("where is the deploy documented?")
        await world.settle()  # one at a time: two live runs in a workspace would share its budget
        await world.user.dm("where is the deploy documented?", user="U2", channel="D2")
        await world.settle()

    # in the thread: task cards, the step done before the answer is written
    tasks = [
        (c["title"], c["status"])
        for call in world.fake.of("chat.startStream") + world.fake.of("chat.appendStream")
        for c in call.get("chunks", [])
        if c["type"] == "task_update"
    ]
    running, done = ("Searching the docs…", "in_progress"), ("Searching the docs…", "complete")
    assert running in tasks and done in tasks and tasks.index(done) > tasks.index(running)
    assert {call["task_display_mode"] for call in world.fake.of("chat.startStream")} == {"timeline"}
    # in the DM: a line under the message while the tool runs
    dm = world.fake.edits()
    assert any(e["channel"] == "D2" and e["text"] == "🔧 _Searching the docs…_" for e in dm)
    assert sorted(m["text"] for m in world.fake.shown()) == ["It is in the guide, on page 4."] * 2
    assert not any(m.get("streaming") for m in world.fake.shown())


async def test_a_question_ending_a_streamed_answer_comes_as_the_streams_closing_blocks(make_world, tmp_path):
    ask = {
        "name": "ask_clarification",
        "args": {"question": "Which region?", "clarification_type": "missing_info", "options": ["eu", "us"]},
    }
    lead = "I can deploy it, but one thing first."
    turns = [{**slowly(lead, 1.5), "tool_calls": [ask]}, {"content": "Deploying to eu."}]
    async with scripted_agent(tmp_path, turns) as agent:
        world = await make_world(agent)
        await world.user.mention("deploy it")
        await world.settle()

        (stop,) = world.fake.of("chat.stopStream")
        assert "Which region?" in json.dumps(stop["blocks"])  # the question's controls end the stream
        assert world.fake.of("chat.postMessage") == [] and world.fake.of("chat.delete") == []
        (message,) = world.fake.shown()
        assert message["text"] == lead and not message["streaming"]  # the answer, whole, above it
        button = next(
            e for b in message["blocks"] for e in b.get("elements", []) if e.get("type") == "button"
        )
        assert (await world.user.click(message, button["action_id"])).status_code == 200
        await world.settle()

    answered, reply = world.fake.shown()
    assert answered["ts"] == message["ts"] and "Answered by" in json.dumps(answered["blocks"])
    assert answered["blocks"][0]["text"]["text"] == lead  # the update keeps the answer above the question
    assert reply["text"] == "Deploying to eu."


async def test_a_question_the_ended_stream_cannot_carry_comes_right_under_it(make_world, tmp_path):
    ask = {"name": "ask_clarification", "args": {"question": "Which region?", "options": ["eu", "us"]}}
    turns = [{**slowly("I can deploy it, but one thing first.", 1.5), "tool_calls": [ask]}]
    async with scripted_agent(tmp_path, turns) as agent:
        world = await make_world(agent)
        world.fake.refuse_next("message_not_in_streaming_state", {"chat.stopStream"})  # Slack ended it
        await world.user.mention("deploy it")
        await world.settle()

    shown = world.fake.shown()
    assert [m["text"] for m in shown] == ["I can deploy it, but one thing first.", "Which region?"]
    assert "blocks" in shown[1] and shown[1]["thread_ts"] == shown[0]["thread_ts"]
    assert not any(m.get("streaming") for m in shown) and world.fake.of("chat.delete") == []


async def test_a_question_without_text_closes_the_stream_and_removes_it(make_world: MakeWorld, tmp_path):
    ask = {"name": "ask_clarification", "args": {"question": "Which region?", "options": ["eu", "us"]}}
    thinking = {"content": "", "tool_calls": [ask], "delay_seconds": 0.5}
    async with scripted_agent(tmp_path, [thinking]) as agent:
        world = await make_world(agent)
        await world.user.mention("deploy it")
        await world.settle()

    (start,) = world.fake.of("chat.startStream")  # "Working…" while the model thought
    assert world.fake.of("chat.stopStream") and len(world.fake.of("chat.delete")) == 1
    assert [m["text"] for m in world.fake.shown()] == ["Which region?"]  # nothing half-written stays


async def test_a_refused_stream_falls_back_to_one_message_edited(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 2.5), slowly("Again.", 0.5)]) as agent:
        world = await make_world(agent)
        world.fake.refuse_every("not_allowed_token_type", {"chat.startStream"})
        _, thread = await world.user.mention("how did the deploy go?")
        await world.settle()
        await world.user.mention("and now?", thread_ts=thread)  # the next run there: not tried again
        await world.settle()

    assert len(world.fake.attempts("chat.startStream")) == 1  # tried once, then edits
    assert world.fake.of("chat.appendStream") == [] and world.fake.of("chat.stopStream") == []
    posted = world.fake.of("chat.postMessage")
    assert [p["text"] for p in posted] == ["⏳ _Working…_"] * 2 and posted[0]["thread_ts"] == thread
    first = next(c.answer["ts"] for c in world.fake.calls if c.method == "chat.postMessage")
    assert len(world.fake.edits(first)) >= 2
    assert all(gap >= 0.9 for gap in gaps(live_calls(world, first)[:-1]))
    assert [m["text"] for m in world.fake.shown()] == [render_reply(ANSWER)[0], "Again."]


async def test_a_stream_slack_ended_goes_on_as_an_edited_message(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 3.0)]) as agent:
        world = await make_world(agent)
        world.fake.stream_lifetime = 1.5  # Slack ends streams after a few minutes: here sooner
        await world.user.mention("how did the deploy go?")
        await world.settle()

    refused = [c for c in world.fake.attempts("chat.appendStream") if not c.answer.get("ok")]
    assert refused and refused[0].answer["error"] == "message_not_in_streaming_state"
    ts = next(c.answer["ts"] for c in world.fake.calls if c.method == "chat.startStream")
    after = [c for c in world.fake.calls if c.at > refused[0].at and c.params.get("ts") == ts]
    assert [c.method for c in after if c.method == "chat.appendStream"] == []  # no append after that
    assert [e["text"] for e in world.fake.edits(ts)][-1] == render_reply(ANSWER)[0]
    (shown,) = world.fake.shown()
    assert shown["text"] == render_reply(ANSWER)[0]


async def test_a_refused_final_edit_posts_the_reply_once_and_removes_the_stream(make_world, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 2.0)]) as agent:
        world = await make_world(agent)
        world.fake.refuse_every("cant_update_message", {"chat.update"})
        await world.user.mention("how did the deploy go?")
        await world.settle()

    assert len(world.fake.of("chat.delete")) == 1  # the half-written stream was tidied away
    (reply,) = world.fake.of("chat.postMessage")
    assert reply["text"] == render_reply(ANSWER)[0]
    assert [m["text"] for m in world.fake.shown()] == [render_reply(ANSWER)[0]]


async def test_a_long_answer_ends_split_as_a_reply_posted_whole(make_world: MakeWorld, tmp_path):
    long_answer = " ".join(f"Step {n} checks the {n}th service and writes what it found." for n in range(120))
    parts = render_reply(long_answer)
    assert len(parts) == 2
    async with scripted_agent(tmp_path, [slowly(long_answer, 2.0)]) as agent:
        world = await make_world(agent)
        _, thread = await world.user.mention("check everything")
        await world.settle()

    ts = next(c.answer["ts"] for c in world.fake.calls if c.method == "chat.startStream")
    shown = world.fake.shown()
    assert [m["text"] for m in shown] == parts  # the first part in the streamed message, then the rest
    assert shown[0]["ts"] == ts and shown[1]["thread_ts"] == thread
    assert not any(m.get("streaming") for m in shown)
    appends = world.fake.of("chat.appendStream")
    assert all(len(c.get("text", "")) <= 12_000 for a in appends for c in a["chunks"])


async def test_streaming_off_keeps_working_then_one_edit(make_world: MakeWorld, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 2.0)]) as agent:
        world = await make_world(agent, streaming="off")
        await world.user.mention("how did the deploy go?")
        await world.settle()

    methods = [c.method for c in world.fake.calls if c.method in SHOWN_METHODS]
    assert methods == ["chat.postMessage", "chat.update"]  # "⏳ Working…", then the reply in its place
    assert world.fake.posted()["text"] == "⏳ _Working…_"
    assert [m["text"] for m in world.fake.shown()] == [render_reply(ANSWER)[0]]


async def test_a_stream_goes_to_the_person_the_run_answers_and_is_taken_over_whole(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    _, thread = await world.user.mention("hello", user="U5")
    await world.settle()
    conversation = in_thread(thread)

    adapter = world.adapter
    view = LiveView(mode=STREAM, text="Half of the answer ", status=None, recipient=Sender(user_id="U5"))
    ref = await adapter.show_live(conversation, view, None)
    assert ref is not None and ref.extra["live"] == STREAM
    start = world.fake.of("chat.startStream")[-1]
    assert (start["recipient_team_id"], start["recipient_user_id"]) == (TEAM_ID, "U5")
    # a replica taking the job over does not know what the stream shows: it ends it, edits it whole
    adopted = LiveView(mode=STREAM, text="The whole answer, again.", shown=None)
    taken = await adapter.show_live(conversation, adopted, MessageRef.model_validate(ref.model_dump()))
    assert taken is not None and taken.extra["live"] == EDIT and taken.message_id == ref.message_id
    last = world.fake.last_shown()
    assert last["text"] == "The whole answer, again." and not last["streaming"]
    # finishing twice (a retried delivery, another replica) leaves the same one message
    for _ in range(2):
        await adapter.send(conversation, TextReply(text="The **whole** answer.", live=ref))
    finished = [m for m in world.fake.shown() if m["ts"] == ref.message_id]
    assert [m["text"] for m in finished] == ["The *whole* answer."]


async def test_a_person_the_stream_cannot_name_gets_an_edited_message(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    conversation = in_thread("1.1", channel="C9")
    ref = await world.adapter.show_live(conversation, LiveView(mode=STREAM, text="Hi "), None)
    assert ref is not None and ref.extra["live"] == EDIT
    assert world.fake.streamed() == [] and world.fake.posted()["thread_ts"] == "1.1"


async def test_live_messages_close_without_leaving_anything_half_written(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    _, thread = await world.user.mention("hello")
    await world.settle()
    conversation = in_thread(thread)
    before = len(world.fake.shown())
    for text in ("", "Some words "):
        view = LiveView(mode=STREAM, text=text, status="⏳ Working…", recipient=Sender(user_id="U1"))
        ref = await world.adapter.show_live(conversation, view, None)
        assert ref is not None and ref.extra["live"] == STREAM
        await world.adapter.send(conversation, LiveEnd(ref=ref))
        await world.adapter.send(conversation, LiveEnd(ref=ref))  # again: already gone is fine
    assert len(world.fake.shown()) == before


async def test_many_live_runs_in_one_workspace_update_less_often_within_its_budget(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    adapter = world.adapter
    conversation = in_thread("1.1", channel="C9")
    assert adapter.live_interval(conversation, STREAM) == 1.0
    refs = []
    for index in range(5):
        view = LiveView(mode=EDIT, text=f"run {index} ")
        ref = await adapter.show_live(in_thread(f"1.{index}", channel="C9"), view, None)
        assert ref is not None
        refs.append(ref)
    # five edited messages share chat.update's 50 a minute: one update each every 6 s at most
    assert adapter.live_interval(conversation, EDIT) == 6.0
    assert adapter.live_interval(conversation, STREAM) == 3.0  # appendStream: 100 a minute
    for index, ref in enumerate(refs):
        await adapter.send(in_thread(f"1.{index}", channel="C9"), TextReply(text="done", live=ref))
    assert adapter.live_interval(conversation, EDIT) == 1.0  # finished: the budget is free again


async def test_an_edited_message_that_shows_the_reply_already_is_not_edited_again(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())
    conversation = in_thread("1.1", channel="C9")  # no recipient named: an edited message
    ref = await world.adapter.show_live(conversation, LiveView(mode=STREAM, text="All *done*."), None)
    assert ref is not None and ref.extra["live"] == EDIT
    before = len(world.fake.attempts("chat.update"))
    await world.adapter.send(conversation, TextReply(text="All *done*.", live=ref))
    assert len(world.fake.attempts("chat.update")) == before  # it reads as the reply already
    await world.adapter.send(conversation, TextReply(text="All *done*, and more.", live=ref))
    assert len(world.fake.attempts("chat.update")) == before + 1  # a different reply is edited in


async def test_the_persons_stop_keeps_what_the_stream_showed_and_stops_the_run(
    make_world: MakeWorld, tmp_path
):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 4.0)]) as agent:
        world = await make_world(agent)
        world.fake.user_stops_after = 1  # Stop pressed once the first words showed
        _, thread = await world.user.mention("how did the deploy go?")
        await world.settle()
        ts = next(c.answer["ts"] for c in world.fake.calls if c.method == "chat.startStream")
        refused = [c for c in world.fake.calls if c.params.get("ts") == ts and not c.answer.get("ok")]
        assert [c.answer["error"] for c in refused] == ["stopped_by_user"]  # told once, then left alone
        after = [c for c in world.fake.calls if c.at > refused[0].at and c.params.get("ts") == ts]
        assert after == []  # no append, no edit, no stop, no delete of the stopped message
        # the run stopped at once (its answer would have taken 4 s), said in a message of its own
        (stopped,) = [c for c in world.fake.attempts("chat.postMessage") if c.answer.get("ok")]
        assert stopped.params["text"] == "■ Stopped. What was already done stays done."
        assert stopped.params["thread_ts"] == thread and stopped.at - refused[0].at < 2.0
        shown, said = world.fake.shown()
        assert shown["ts"] == ts and shown["text"] and ANSWER.startswith(shown["text"])
        assert shown["text"] != ANSWER  # what it showed when the person stopped it
        world.fake.user_stops_after = None
        await world.user.mention("and now?", thread_ts=thread)  # the conversation goes on
        await world.settle()

    assert [m["text"] for m in world.fake.shown()][2:] == [render_reply(ANSWER)[0]]  # answered whole


async def test_a_stream_slack_would_not_stop_still_ends_as_the_reply_once(make_world, tmp_path):
    async with scripted_agent(tmp_path, [slowly(ANSWER, 2.0), slowly("Again.", 0.5)]) as agent:
        world = await make_world(agent)
        world.fake.refuse_next("invalid_arguments", {"chat.stopStream"})  # Slack refuses to stop it once
        _, thread = await world.user.mention("how did the deploy go?")
        await world.settle()
        world.fake.refuse_every("invalid_arguments", {"chat.stopStream"})  # and now every time
        await world.user.mention("and now?", thread_ts=thread)
        await world.settle()

    first, second = world.fake.shown()
    assert not first["streaming"]  # stopped after all: no longer looks half-written
    assert [first["text"], second["text"]] == [render_reply(ANSWER)[0], "Again."]  # each reply once
    assert world.fake.of("chat.postMessage") == [] and world.fake.of("chat.delete") == []
    assert len(world.fake.attempts("chat.stopStream")) == 4  # each refusal tried once more, not again
