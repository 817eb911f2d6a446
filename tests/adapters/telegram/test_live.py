"""Runs shown live on Telegram: a streamed draft in private chats, one edited message in groups.

Through the real gateway and python-telegram-bot against the fake Bot API, with the scripted
model streaming slowly (``token_delay_seconds``) or a runner playing events with pauses.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from clarigate.adapters.telegram import live
from clarigate.adapters.telegram.markup import markdown_to_html, split_markdown
from clarigate.adapters.telegram.settings import TelegramSettings
from clarigate.adapters.testing import asking, choice_request
from clarigate.agent.events import TextDelta, ToolFinished, ToolStarted
from clarigate.agent.harness import AgentSettings, TurnOutput
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.flow.test_streaming import StreamingRunner, words

from .fake_bot_api import DRAFT_PEER_INVALID, Call, FakeBotApi
from .harness import ALICE, GROUP, mention_update, message_update

PRIVATE = ALICE["id"]
GROUP_ID = GROUP["id"]
LIVE_METHODS = ("sendMessageDraft", "sendMessage", "editMessageText")


@pytest.fixture
async def scripted(tmp_path: Path) -> AsyncIterator[Callable[..., LangGraphRunner]]:
    """The in-process agent playing the given turns with the scripted model (closed afterwards)."""
    made: list[LangGraphRunner] = []

    def make(*turns: dict[str, Any]) -> LangGraphRunner:
        script = tmp_path / f"script-{len(made)}.yaml"
        script.write_text(yaml.safe_dump(list(turns)))
        settings = AgentSettings(
            model=f"scripted:{script}", checkpointer_url="memory://", data_dir=str(tmp_path)
        )
        runner = LangGraphRunner(settings)
        made.append(runner)
        return runner

    yield make
    for runner in made:
        await runner.aclose()


def texts(calls: list[Call]) -> list[str]:
    return [str(call.params.get("text", "")) for call in calls]


def gaps(calls: list[Call]) -> list[float]:
    return [b.at - a.at for a, b in zip(calls, calls[1:], strict=False)]


def sentence(count: int) -> str:
    return " ".join(f"word{i}" for i in range(count))


# --- private chats: a draft, then one message -------------------------------------------------------


async def test_a_private_answer_streams_in_a_draft_then_arrives_as_one_formatted_message(bench, scripted):
    answer = "**Done.** " + sentence(30)
    tg = await bench(scripted({"content": answer, "token_delay_seconds": 0.1}))
    started = time.monotonic()
    await tg.deliver(message_update("how did the deploy go?"))
    took = time.monotonic() - started
    drafts = tg.api.of("sendMessageDraft")
    assert len(drafts) >= 2 and len(drafts) <= took / live.DRAFT_INTERVAL + 2  # by time, not by tokens
    assert len({d.params["draft_id"] for d in drafts}) == 1 and drafts[0].params["draft_id"] != "0"
    assert all(d.params["parse_mode"] == "HTML" for d in drafts)
    shown = texts(drafts)
    assert shown[0].startswith("<b>Done.</b>") and all(
        b.startswith(a) for a, b in zip(shown, shown[1:], strict=False)
    )
    assert min(gaps(drafts)) >= live.DRAFT_INTERVAL * 0.95
    [reply] = tg.api.of("sendMessage")  # the answer is one message, formatted, after the last draft
    assert reply.params["text"] == markdown_to_html(answer) and reply.params["parse_mode"] == "HTML"
    assert reply.at > drafts[-1].at
    assert tg.api.of("sendChatAction")[0].at < drafts[0].at  # "typing…" while there was nothing to show
    assert tg.api.of("editMessageText") == [] and tg.api.visible_drafts(PRIVATE) == []


async def test_a_tool_step_shows_in_the_draft_until_the_answer_starts(bench):
    events = [
        ToolStarted("search_docs", "c1", "Searching the docs."),
        1.3,
        ToolFinished("search_docs", "c1"),
        *words("Found it in the guide.", 0.3),
    ]
    tg = await bench(StreamingRunner(events, TurnOutput(replies=["Found it in the guide."])))
    await tg.deliver(message_update("where is it documented?"))
    shown = texts(tg.api.of("sendMessageDraft"))
    assert shown[0] == "<i>🔧 Searching the docs…</i>"
    assert shown[-1].startswith("Found") and "🔧" not in shown[-1]
    assert texts(tg.api.of("sendMessage")) == ["Found it in the guide."]


async def test_an_unchanged_draft_is_sent_again_before_it_expires_and_not_after_the_reply(bench, monkeypatch):
    monkeypatch.setattr(live, "DRAFT_REFRESH", 0.3)
    events = [ToolStarted("build", "c1", "Building the site."), 1.4, ToolFinished("build", "c1")]
    tg = await bench(StreamingRunner(events, TurnOutput(replies=["Built."])))
    await tg.deliver(message_update("build it"))
    shown = texts(tg.api.of("sendMessageDraft"))
    assert shown.count("<i>🔧 Building the site…</i>") >= 3  # kept up while the step ran
    after = len(tg.api.calls)
    await asyncio.sleep(0.8)
    assert len(tg.api.calls) == after  # the reply stopped it


async def test_text_streamed_before_a_question_becomes_a_message_and_the_question_follows(bench, scripted):
    question = {
        "name": "ask_clarification",
        "args": {
            "question": "Which region?",
            "clarification_type": "approach_choice",
            "options": ["eu-west", "us-east"],
        },
    }
    said = "I can deploy to two regions, each with its own latency and cost for your users."
    tg = await bench(scripted({"content": said, "token_delay_seconds": 0.12, "tool_calls": [question]}))
    await tg.deliver(message_update("deploy it"))
    assert len(tg.api.of("sendMessageDraft")) >= 1
    streamed, asked = tg.api.of("sendMessage")
    assert streamed.params["text"] == said and streamed.markup is None
    assert "Which region?" in asked.params["text"] and asked.buttons
    assert tg.api.visible_drafts(PRIVATE) == []


async def test_a_run_that_only_showed_a_step_leaves_no_draft_behind_its_question(bench):
    request = choice_request("Which region?", ["eu", "us"])
    runner = StreamingRunner(
        [ToolStarted("list_regions", "c1", "Listing the regions."), 1.0], asking(request)
    )
    tg = await bench(runner)
    await tg.deliver(message_update("deploy it"))
    assert texts(tg.api.of("sendMessageDraft")) == ["<i>🔧 Listing the regions…</i>"]
    [asked] = tg.api.of("sendMessage")
    assert "Which region?" in asked.params["text"]
    assert tg.api.visible_drafts(PRIVATE) == [] and tg.api.of("deleteMessage") == []


async def test_a_failing_draft_stops_the_updates_and_the_reply_is_posted_once(bench):
    answer = "An answer that takes a while to write out, word after word."
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])))
    tg.api.fail_always("sendMessageDraft", 500)
    await tg.deliver(message_update("go"))
    assert len(tg.api.of("sendMessageDraft")) == 1  # refused once: no more updates for this run
    assert texts(tg.api.of("sendMessage")) == [answer]


async def test_where_drafts_are_refused_the_private_chat_gets_an_edited_message(bench):
    answer = "Written into one message instead, since drafts are refused in this chat."
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])))
    tg.api.fail_always("sendMessageDraft", 400, description=DRAFT_PEER_INVALID)
    await tg.deliver(message_update("go"))
    [live_message] = tg.api.of("sendMessage")
    message_id = live_message.result["message_id"]
    edits = tg.api.of("editMessageText")
    assert edits and all(int(e.params["message_id"]) == message_id for e in edits)
    assert tg.api.shown(PRIVATE, message_id) == answer
    drafts = len(tg.api.of("sendMessageDraft"))
    await tg.deliver(message_update("again"))
    assert len(tg.api.of("sendMessageDraft")) == drafts  # this chat is not offered drafts again


# --- groups: one message, edited -----------------------------------------------------------------


async def test_a_group_answer_is_one_message_edited_at_most_every_three_seconds(bench, scripted):
    answer = sentence(60) + " **done**"
    tg = await bench(scripted({"content": answer, "token_delay_seconds": 0.18}))
    started = time.monotonic()
    assert (await tg.post(mention_update("write it slowly"))).status_code == 200
    await tg.gateway.drain(timeout=30)
    took = time.monotonic() - started
    [live_message] = tg.api.of("sendMessage")  # no second message: the reply is that one
    assert live_message.params["reply_parameters"]  # a reply to the person's message, as replies are
    message_id = live_message.result["message_id"]
    edits = tg.api.of("editMessageText")
    assert all(int(e.params["message_id"]) == message_id for e in edits)
    updates, final = [live_message, *edits[:-1]], edits[-1]
    assert len(updates) >= 3 and len(updates) <= took / live.GROUP_EDIT_INTERVAL + 2
    assert min(gaps(updates)) >= live.GROUP_EDIT_INTERVAL * 0.95
    assert final.params["text"] == markdown_to_html(answer)
    assert tg.api.shown(GROUP_ID, message_id) == markdown_to_html(answer)


async def test_a_tool_step_in_a_group_is_the_message_that_becomes_the_answer(bench, quick_groups):
    events = [
        ToolStarted("search_docs", "c1", "Searching the docs."),
        1.0,
        ToolFinished("search_docs", "c1"),
        *words("Found it in the guide.", 0.2),
    ]
    tg = await bench(StreamingRunner(events, TurnOutput(replies=["Found it in the guide."])))
    await tg.deliver(mention_update("where is it documented?"))
    [live_message] = tg.api.of("sendMessage")
    assert live_message.params["text"] == "<i>🔧 Searching the docs…</i>"
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) == "Found it in the guide."


async def test_a_group_question_after_streamed_text_follows_the_finished_message(bench, quick_groups):
    request = choice_request("Which region?", ["eu", "us"])
    said = "I can deploy to two regions."
    tg = await bench(StreamingRunner(words(said, 0.2), asking(request)))
    await tg.deliver(mention_update("deploy it"))
    live_message, asked = tg.api.of("sendMessage")
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) == said
    assert "Which region?" in asked.params["text"] and asked.buttons


async def test_a_group_message_that_only_showed_a_step_is_deleted_before_the_question(bench, quick_groups):
    request = choice_request("Which region?", ["eu", "us"])
    runner = StreamingRunner(
        [ToolStarted("list_regions", "c1", "Listing the regions."), 1.0], asking(request)
    )
    tg = await bench(runner)
    await tg.deliver(mention_update("deploy it"))
    live_message, asked = tg.api.of("sendMessage")
    assert live_message.params["text"] == "<i>🔧 Listing the regions…</i>"
    [deleted] = tg.api.of("deleteMessage")
    assert int(deleted.params["message_id"]) == live_message.result["message_id"]
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) is None
    assert "Which region?" in asked.params["text"]


async def test_an_edit_refused_for_good_stops_updates_and_the_reply_is_posted_once(bench, quick_groups):
    answer = "An answer that takes a while to write out, word after word."
    tg = await bench(StreamingRunner(words(answer, 0.1), TurnOutput(replies=[answer])))
    tg.api.fail_always("editMessageText", 400, description="Bad Request: message can't be edited")
    await tg.deliver(mention_update("go"))
    live_message, reply = tg.api.of("sendMessage")
    assert len(tg.api.of("editMessageText")) == 2  # the refused update, the refused finish: no more
    [deleted] = tg.api.of("deleteMessage")  # the half-written message is tidied away
    assert int(deleted.params["message_id"]) == live_message.result["message_id"]
    assert reply.params["text"] == answer  # posted anew, once


# --- both: long answers, hostile text, streaming off ---------------------------------------------------


def long_answer() -> str:
    return "\n\n".join(f"**Part {i}**: " + "text " * 170 for i in range(12))


def paragraphs(answer: str, pause: float) -> list[object]:
    events: list[object] = []
    for paragraph in answer.split("\n\n"):
        events += [TextDelta(paragraph + "\n\n", "m1"), pause]
    return events


async def test_a_long_private_answer_is_cut_in_the_draft_and_split_into_messages(bench):
    answer = long_answer()
    tg = await bench(StreamingRunner(paragraphs(answer, 0.25), TurnOutput(replies=[answer])))
    await tg.deliver(message_update("write a lot"))
    drafts = texts(tg.api.of("sendMessageDraft"))
    assert all(len(text) <= 4096 for text in drafts) and drafts[-1].endswith("\n…")
    assert all(one != the_next for one, the_next in zip(drafts, drafts[1:], strict=False))  # no cut re-sent
    pieces = split_markdown(answer)
    assert len(pieces) > 1 and texts(tg.api.of("sendMessage")) == [markdown_to_html(p) for p in pieces]


async def test_a_long_group_answer_fills_the_live_message_and_the_rest_follows(bench, quick_groups):
    answer = long_answer()
    tg = await bench(StreamingRunner(paragraphs(answer, 0.25), TurnOutput(replies=[answer])))
    await tg.deliver(mention_update("write a lot"))
    live_message, *rest = tg.api.of("sendMessage")
    updates = [live_message, *tg.api.of("editMessageText")]
    assert all(len(text) <= 4096 for text in texts(updates))
    assert any(text.endswith("\n…") for text in texts(updates))  # cut, not refused
    first, *others = [markdown_to_html(p) for p in split_markdown(answer)]
    assert tg.api.shown(GROUP_ID, live_message.result["message_id"]) == first
    assert texts(rest) == others


@pytest.mark.parametrize("where", ["private", "group"])
async def test_model_text_is_escaped_in_every_update_and_pings_nobody(bench, quick_groups, where):
    hostile = "Ping @everyone and @all <script>alert(1)</script> & [me](tg://user?id=1) now, please."
    tg = await bench(StreamingRunner(words(hostile, 0.15), TurnOutput(replies=[hostile])))
    await tg.deliver(message_update("go") if where == "private" else mention_update("go"))
    calls = [call for call in tg.api.calls if call.method in LIVE_METHODS]
    partial = calls[:-1]  # all but the reply's own call
    assert len(partial) >= 2
    for text in texts(calls):
        assert not re.search(r"(?<![A-Za-z0-9_])@(?=\w)", text)  # no mention Telegram would ping
        assert "<script>" not in text and "<a " not in text  # a tg:// link stays inert text
    assert any("@\u2060everyone" in text and "&lt;script&gt;" in text for text in texts(partial))


async def test_streaming_off_keeps_typing_and_the_whole_reply(bench):
    answer = "Slowly written words, shown only once they are all there."
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])), streaming="off")
    await tg.deliver(message_update("go"))
    await tg.deliver(mention_update("go"))
    assert {call.method for call in tg.api.calls if call.method in LIVE_METHODS} == {"sendMessage"}
    assert len(tg.api.of("sendChatAction")) >= 2  # "typing…" for each run, as before
    assert texts(tg.api.of("sendMessage")) == [answer, answer]


async def test_streaming_off_for_telegram_alone(bench, bot_api: FakeBotApi):
    answer = "Slowly written words, shown only once they are all there."
    section = TelegramSettings(streaming="off")
    tg = await bench(StreamingRunner(words(answer, 0.15), TurnOutput(replies=[answer])), telegram=section)
    await tg.deliver(message_update("go"))
    assert tg.api.of("sendMessageDraft") == [] and texts(tg.api.of("sendMessage")) == [answer]


# --- the adapter's side of the contract ---------------------------------------------------------------


async def test_drafts_in_private_chats_edits_in_groups_within_telegrams_limits(bench):
    tg = await bench()
    private = Conversation(platform="telegram", chat_id=str(PRIVATE), is_direct=True)
    group = Conversation(platform="telegram", chat_id=str(GROUP_ID), topic="msg-1", reply_to="1")
    assert tg.adapter.live_mode(private) == "draft" and tg.adapter.live_mode(group) == "edit"
    assert tg.adapter.live_interval(private, "draft") == 1.0
    assert tg.adapter.live_interval(private, "edit") == 1.0
    assert tg.adapter.live_interval(group, "edit") == 3.0  # 20 messages a minute in a group


async def test_another_replica_finishes_the_message_a_first_ref_did_not_name(bench):
    store = MemoryStore("handover")
    try:
        first, second = await bench(store=store), await bench(store=store)
        group = Conversation(platform="telegram", chat_id=str(GROUP_ID), topic="msg-1", reply_to="1")
        working = LiveView(mode="edit", status="⏳ Working…")
        ref = await first.adapter.show_live(group, working, None)  # "typing…": no message yet
        assert ref is not None and ref.message_id == "" and first.api.of("sendMessage") == []
        half = LiveView(mode="edit", text="Half an answer", shown="")
        await first.adapter.show_live(group, half, ref)  # the message comes later than the ref
        [live_message] = first.api.of("sendMessage")
        reply = TextReply(text="Half an answer, then the rest.", live=ref)  # the ref the core kept
        for _ in range(2):  # finishing is safe to repeat
            await second.adapter.send(group, reply)
        assert first.api.of("sendMessage") == [live_message]
        assert (
            first.api.shown(GROUP_ID, live_message.result["message_id"]) == "Half an answer, then the rest."
        )
    finally:
        await store.close()
