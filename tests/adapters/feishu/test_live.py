"""Live replies on Feishu: a CardKit streaming card while the agent writes, its steps, the final
card; an edited card when CardKit is refused. The real core and LangGraph agent (a scripted model
streaming word by word), real lark-oapi against the fake open API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from clarigate.adapters.feishu import FeishuAdapter
from clarigate.adapters.feishu import live as card_pace
from clarigate.adapters.feishu.live import (
    ANSWER_ELEMENT,
    CARD_INTERVAL,
    EDIT_INTERVAL,
    LIVE_CHARS,
    latest,
    live_markdown,
)
from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.adapters.markdown import parse
from clarigate.agent.harness import AgentSettings
from clarigate.gateway.boundary.messages import Conversation
from clarigate.gateway.boundary.outbound_items import LiveView, TextReply
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore

from ..emoji_text import AT_THE_CUT
from .cards import components, is_interactive, text_of
from .conftest import feishu_settings
from .events import message_event
from .fake_open_api import Call, FakeOpenApi, cardkit_kind
from .test_connections import within

P2P = Conversation(platform="feishu", workspace="t", chat_id="oc_p2p", is_direct=True)

ANSWER = (
    "The deploy went through on the second try: the first one stopped at the database "
    "migration, which needed a lock that a backup job held. Once the backup finished, "
    "everything else ran in about four minutes and every health check passed."
)


@pytest.fixture
async def agent(tmp_path: Any) -> AsyncIterator[Callable[..., LangGraphRunner]]:
    """Build the in-process agent around a script of turns (closed afterwards)."""
    made: list[LangGraphRunner] = []

    def build(turns: list[dict[str, Any]], **settings: Any) -> LangGraphRunner:
        script = tmp_path / f"script{len(made)}.yaml"
        script.write_text(yaml.safe_dump(turns, allow_unicode=True))
        runner = LangGraphRunner(
            AgentSettings(
                model=f"scripted:{script}", checkpointer_url="memory://", data_dir=str(tmp_path), **settings
            )
        )
        made.append(runner)
        return runner

    yield build
    for runner in made:
        await runner.aclose()


@pytest.fixture
def quick_cards(monkeypatch: pytest.MonkeyPatch) -> None:
    """Streaming cards updated twice a second instead of once, for tests about something else
    than the pace (a stream of a few seconds then shows several updates)."""
    monkeypatch.setattr(card_pace, "CARD_INTERVAL", 0.5)


def streamed(api: FakeOpenApi) -> list[str]:
    """The texts the streaming card's answer element was given, in order."""
    return [c.body["content"] for c in api.cardkit_calls("content")]


def entity_of(api: FakeOpenApi, message_id: str) -> Any:
    return next(e for e in api.entities.values() if e.message_id == message_id)


def bodies(calls: list[Call]) -> str:
    """Everything the adapter sent, as one string (card JSON inside bodies included)."""
    return "\n".join(json.dumps(c.body, ensure_ascii=False) for c in calls if c.body is not None)


async def test_a_slow_answer_streams_into_one_card_that_becomes_the_formatted_reply(make_bot, agent):
    bot = await make_bot(agent([{"content": ANSWER, "token_delay_seconds": 0.08}]))
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    api = bot.api

    # one streaming card made and sent; the text pushed whole each time, growing
    [create] = api.cardkit_calls("create")
    made = json.loads(create.body["data"])
    assert made["config"]["streaming_mode"] is True and made["config"]["update_multi"] is True
    assert made["body"]["elements"][0]["element_id"] == ANSWER_ELEMENT
    assert text_of(made) == "⏳ Working…"
    [post] = api.posted()
    assert json.loads(post.body["content"]) == {"type": "card", "data": {"card_id": list(api.entities)[0]}}
    texts = streamed(api)
    assert len(texts) >= 3 and texts[-1] != ANSWER  # shown as it grew, not only at the end
    assert all(ANSWER.startswith(t) for t in texts) and all(
        later.startswith(earlier) for earlier, later in zip(texts, texts[1:], strict=False)
    )  # a prefix of the next: Feishu types out the difference

    # calls bounded by time, not by the ~40 words: at most one per interval, spaced by it
    content = api.cardkit_calls("content")
    gaps = [b.at - a.at for a, b in zip(content, content[1:], strict=False)]
    assert min(gaps) >= CARD_INTERVAL * 0.9
    assert len(content) <= (content[-1].at - create.at) / CARD_INTERVAL + 2

    # the reply finishes that card: streaming closed, then the final card in its place, then
    # 👍/👎 appended to it (its stream is over)
    assert [cardkit_kind(c) for c in api.cardkit_calls()][-3:] == ["settings", "update", "elements"]
    settings = api.cardkit_calls("settings")[-1]
    assert json.loads(settings.body["settings"]) == {"config": {"streaming_mode": False}}
    sequences = [c.body["sequence"] for c in api.cardkit_calls() if cardkit_kind(c) != "create"]
    assert sequences == sorted(set(sequences)) and all(0 < s < 2**31 for s in sequences)
    [shown] = api.shown()
    assert text_of(shown) == ANSWER and "streaming_mode" not in shown["config"]
    assert [e.streaming for e in api.entities.values()] == ["off"]
    assert not api.patched() and len(api.posted()) == 1  # no second message, no IM edits
    assert all(c.code == 0 for c in api.message_calls() + api.cardkit_calls())


async def test_a_fast_answer_updates_the_card_once_a_second_and_it_ends_complete(make_bot, agent):
    fast = " ".join(f"w{i}" for i in range(400))  # 400 words in ~3 s
    bot = await make_bot(agent([{"content": fast, "token_delay_seconds": 0.007}]))
    assert bot.adapter.live_interval(P2P, "card") == 1.0
    await bot.deliver(message_event("write fast"))
    await bot.gateway.drain(timeout=20)
    api = bot.api

    # a handful of updates for 400 words: each the whole text so far, about a second apart
    [create] = api.cardkit_calls("create")
    content = api.cardkit_calls("content")
    gaps = [b.at - a.at for a, b in zip(content, content[1:], strict=False)]
    assert 2 <= len(content) <= (content[-1].at - create.at) / 1.0 + 2 and min(gaps) >= 0.9
    texts = streamed(api)
    assert all(fast.startswith(t) for t in texts)

    # the card ends as the whole answer, every word in order, its stream closed
    [shown] = api.shown()
    assert text_of(shown) == fast
    assert [e.streaming for e in api.entities.values()] == ["off"] and len(api.posted()) == 1


ROLLBACKS = (
    "Rollbacks are in the deploy guide, section four: it shows how to pick the release to go "
    "back to and how long the database takes to follow."
)


async def test_a_tool_step_shows_as_a_line_on_the_card_and_is_gone_from_the_answer(make_bot, agent):
    turns = [
        {"tool_calls": [{"name": "search_docs", "args": {"topic": "rollbacks"}}]},
        {"content": ROLLBACKS, "token_delay_seconds": 0.05},
    ]
    bot = await make_bot(agent(turns, tools=("tests.adapters.feishu.live_tools:search_docs",)))
    await bot.deliver(message_event("where are rollbacks documented?"))
    await bot.gateway.drain(timeout=20)
    texts = streamed(bot.api)
    assert "🔧 Searching the docs…" in texts  # the step, while the tool ran
    after = texts[texts.index("🔧 Searching the docs…") + 1 :]
    assert after and all("🔧" not in t for t in after) and after[-1].startswith("Rollbacks")
    [shown] = bot.api.shown()
    assert text_of(shown) == ROLLBACKS


async def test_text_streamed_before_a_question_is_ended_and_the_question_follows(make_bot, agent):
    ask = {
        "content": "I can deploy this to either region right away.",
        "token_delay_seconds": 0.06,
        "tool_calls": [
            {
                "name": "ask_clarification",
                "args": {
                    "question": "Which region?",
                    "clarification_type": "approach_choice",
                    "options": ["eu-west", "us-east"],
                },
            }
        ],
    }
    bot = await make_bot(agent([ask]))
    await bot.deliver(message_event("deploy it"))
    await bot.gateway.drain(timeout=20)
    live, question = bot.api.shown()
    assert text_of(live) == "I can deploy this to either region right away." and not is_interactive(live)
    assert "Which region?" in text_of(question) and is_interactive(question)
    assert [e.streaming for e in bot.api.entities.values()] == ["off"]  # no cursor left on the first
    assert len(bot.api.posted()) == 2


async def test_a_question_with_nothing_written_recalls_the_working_card(make_bot, agent):
    ask = {
        "delay_seconds": 0.4,
        "tool_calls": [
            {"name": "ask_clarification", "args": {"question": "Which region?", "options": ["eu", "us"]}}
        ],
    }
    bot = await make_bot(agent([ask]))
    await bot.deliver(message_event("deploy it"))
    await bot.gateway.drain(timeout=20)
    working = bot.api.posted()[0]
    [recall] = [c for c in bot.api.message_calls() if c.method == "DELETE"]
    assert recall.path.endswith(bot.api.by_uuid[working.body["uuid"]]) and recall.status == 200
    [question] = bot.api.shown()  # the question only: no "Working…" left behind
    assert "Which region?" in text_of(question)


async def test_model_text_never_mentions_anyone_in_partial_updates_or_the_reply(make_bot, agent):
    sly = (
        'Ping <at user_id="all">everyone</at> and <at id=all></at> now, '
        "then <font color='red'>shout</font> a bit, and say it all again a little longer so "
        "that the card shows it while it is written."
    )
    bot = await make_bot(agent([{"content": sly, "token_delay_seconds": 0.08}]))
    await bot.deliver(message_event("say hi to all"))
    await bot.gateway.drain(timeout=20)
    sent = bodies(bot.api.calls)
    assert len(streamed(bot.api)) >= 2
    assert "<at" not in sent and "<font" not in sent and "\\u003c" not in sent
    assert '&#60;at user_id=\\\\"all\\\\"' in sent or "&#60;at user_id=" in sent  # shown, as text
    assert "Ping &#60;at" in text_of(bot.api.shown()[-1])


async def test_a_long_answer_streams_its_first_part_and_the_rest_follows_as_messages(make_bot, agent):
    long = " ".join(f"word{i:04d}" for i in range(1100))  # ~9,900 characters: three cards
    bot = await make_bot(agent([{"content": long, "token_delay_seconds": 0.001}]))
    await bot.deliver(message_event("write a lot"))
    await bot.gateway.drain(timeout=30)
    assert streamed(bot.api) and all(len(t) <= LIVE_CHARS for t in streamed(bot.api))
    shown = bot.api.shown()
    assert len(shown) == 3 and " ".join(text_of(c) for c in shown) == long
    assert len(bot.api.posted()) == 3  # the streaming card, then two more parts
    assert all(c.code == 0 for c in bot.api.message_calls() + bot.api.cardkit_calls())


def test_the_latest_part_starts_at_a_line_and_inside_the_code_block_it_cut():
    code = "```python\n" + "".join(f"print({i})\n" for i in range(600))  # no closing fence yet
    shown = latest(code)
    assert (
        len(shown) <= LIVE_CHARS
        and shown.startswith("…\n```python\nprint(")
        and shown.endswith("print(599)\n```")
    )
    assert latest("short answer") == "short answer"


@pytest.mark.parametrize(
    ("opening", "lines", "closing"),
    [
        ("```python\nsep = '```'", 400, "```"),  # code holding "```": no count of them tells
        ("~~~", 800, "~~~"),
        ("````", 800, "````"),
    ],
)
def test_a_code_block_cut_in_a_live_card_is_reopened_with_its_own_fence_and_the_text_after_stays_text(
    opening: str, lines: int, closing: str
):
    code = "".join(f"x{i} = {i}  # <at id=all></at>\n" for i in range(lines))
    text = f"{opening}\n{code}{closing}\nAfter the code, **bold** text."
    shown = live_markdown(LiveView(mode="card", text=text))
    tokens = parse(shown)
    blocks = [t for t in tokens if t.type == "fence"]
    assert len(shown) <= LIVE_CHARS and len(blocks) == 1 and blocks[0].markup[0] == closing[0]
    assert blocks[0].content.endswith(
        f"x{lines - 1} = {lines - 1}  # <at id=all></at>\n"
    )  # code, as in a final card
    assert "<at" not in shown.replace(blocks[0].content, "")  # out of code, never a mention
    after = [t for t in tokens if t.type == "inline" and "After the code" in t.content]
    assert after and any(child.type == "strong_open" for child in after[0].children or [])  # text, styled


@pytest.mark.parametrize("emoji", AT_THE_CUT)
def test_the_latest_part_never_starts_inside_a_character(emoji: str):
    text = emoji * 3000  # no line to start at: the cut lands inside a character as shown
    for extra in range(len(emoji)):
        shown = latest(text + "x" * extra)
        assert shown.startswith("…\n" + emoji) and len(shown) <= LIVE_CHARS


async def test_past_the_first_card_the_live_card_keeps_showing_the_latest_words(make_bot, agent, quick_cards):
    long = " ".join(f"word{i:04d}" for i in range(700))  # ~6,300 characters: two cards
    bot = await make_bot(agent([{"content": long, "token_delay_seconds": 0.004}]))
    await bot.deliver(message_event("write a lot"))
    await bot.gateway.drain(timeout=30)
    texts = streamed(bot.api)
    assert all(len(t) <= LIVE_CHARS for t in texts)
    moving = [t for t in texts if t.startswith("…\n")]  # past 4,000 characters: the latest part
    assert len(moving) >= 2 and len(set(moving)) == len(moving)  # still moving, not frozen
    last_word = [int(t.split()[-1].removeprefix("word")) for t in moving]
    assert last_word == sorted(last_word) and last_word[-1] > 450  # words past the first card
    shown = bot.api.shown()  # the reply: every word, from the start, over two cards
    assert len(shown) == 2 and " ".join(text_of(c) for c in shown) == long


async def test_cardkit_refused_the_run_is_shown_by_edits_of_an_ordinary_card(make_bot, agent):
    turn = {"content": ANSWER, "token_delay_seconds": 0.05}
    bot = await make_bot(agent([turn, turn]))
    bot.api.refuse_cardkit = True  # the app lacks cardkit:card:write
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    [refused] = bot.api.cardkit_calls()
    assert refused.code == 99991672
    [post] = bot.api.posted()
    assert text_of(json.loads(post.body["content"])) == "⏳ Working…"
    edits = bot.api.patched()
    assert len(edits) >= 3 and text_of(edits[-1].card()) == ANSWER
    assert all(ANSWER.startswith(text_of(e.card())) for e in edits[1:])
    gaps = [b.at - a.at for a, b in zip(edits, edits[1:-1], strict=False)]  # the last is the reply
    assert min(gaps) >= CARD_INTERVAL * 0.9  # 5 edits a second per message allowed: one a second
    assert [text_of(c) for c in bot.api.shown()] == [ANSWER]

    # the next run goes straight to edits, one a second: CardKit is not asked again for a while
    bot.api.calls.clear()
    await bot.deliver(message_event("and the one before?"))
    await bot.gateway.drain(timeout=20)
    assert not bot.api.cardkit_calls() and len(bot.api.shown()) == 2
    edits = bot.api.patched()
    gaps = [b.at - a.at for a, b in zip(edits, edits[1:-1], strict=False)]
    assert len(edits) >= 2 and min(gaps, default=1.0) >= EDIT_INTERVAL * 0.9


async def test_cardkit_failing_mid_stream_the_reply_is_posted_once_and_nothing_dangles(
    make_bot, agent, quick_cards
):
    bot = await make_bot(agent([{"content": ANSWER, "token_delay_seconds": 0.05}]))
    await bot.deliver(message_event("how did the deploy go?"))
    assert await asyncio.to_thread(within, 10.0, lambda: len(bot.api.cardkit_calls("content")) >= 2)
    bot.api.refuse_cardkit = True  # from now on every CardKit call is refused
    await bot.gateway.drain(timeout=20)
    assert bot.api.cardkit_calls("content")[-1].code == 99991672  # updates stopped at the first refusal
    assert [c.code for c in bot.api.cardkit_calls("content")].count(99991672) == 1
    live_message = bot.api.by_uuid[bot.api.posted()[0].body["uuid"]]
    assert live_message in bot.api.deleted  # the half-written card recalled
    [shown] = bot.api.shown()
    assert text_of(shown) == ANSWER and len(bot.api.posted()) == 2  # the reply posted anew, once


async def test_a_stream_feishu_closed_on_its_own_is_opened_again(make_bot, agent, quick_cards):
    bot = await make_bot(agent([{"content": ANSWER, "token_delay_seconds": 0.05}]))
    await bot.deliver(message_event("how did the deploy go?"))
    assert await asyncio.to_thread(within, 10.0, lambda: len(bot.api.cardkit_calls("content")) >= 2)
    bot.api.time_out_streaming(next(iter(bot.api.entities)))  # Feishu's streaming timeout
    await bot.gateway.drain(timeout=20)
    codes = [(cardkit_kind(c), c.code) for c in bot.api.cardkit_calls()]
    at = codes.index(("content", 200850))
    assert codes[at + 1 : at + 3] == [("settings", 0), ("content", 0)]
    reopened = bot.api.cardkit_calls("settings")[0]
    assert json.loads(reopened.body["settings"]) == {"config": {"streaming_mode": True}}
    assert [text_of(c) for c in bot.api.shown()] == [ANSWER]


async def test_streaming_off_keeps_the_working_card_and_one_edit(make_bot, agent):
    for config in ({"streaming": "off"}, {"feishu": FeishuSettings(streaming="off")}):
        bot = await make_bot(agent([{"content": ANSWER, "token_delay_seconds": 0.02}]), **config)
        bot.api.calls.clear()
        bot.api.cards.clear()
        await bot.deliver(message_event("how did the deploy go?"))
        await bot.gateway.drain(timeout=20)
        assert not bot.api.cardkit_calls()
        [post] = bot.api.posted()
        assert text_of(json.loads(post.body["content"])) == "⏳ Working…"
        [edit] = bot.api.patched()  # the reply takes the "Working…" card's place, as before
        assert text_of(edit.card()) == ANSWER and [text_of(c) for c in bot.api.shown()] == [ANSWER]
        await bot.gateway.stop(grace=0)


async def test_streaming_off_edits_the_working_card_again_when_an_edit_fails_for_now(make_bot, agent):
    for status, code in ((500, 1), (400, 230020)):  # a 5xx; Feishu's per-chat rate limit
        bot = await make_bot(
            agent([{"content": ANSWER, "token_delay_seconds": 0.02}]), feishu=FeishuSettings(streaming="off")
        )
        bot.api.calls.clear()
        bot.api.cards.clear()
        bot.api.fail_next(status, code, method="PATCH")  # the edit showing the reply fails once
        await bot.deliver(message_event("how did the deploy go?"))
        await bot.gateway.drain(timeout=20)
        [post] = bot.api.posted()  # no second message: the core's retry edits the same card
        assert text_of(json.loads(post.body["content"])) == "⏳ Working…"
        assert [edit.status for edit in bot.api.patched()] == [status, 200]
        assert [text_of(c) for c in bot.api.shown()] == [ANSWER]  # no "Working…" left behind
        await bot.gateway.stop(grace=0)


async def test_streaming_off_posts_the_reply_anew_when_the_edit_fails_again(make_bot, agent):
    bot = await make_bot(
        agent([{"content": ANSWER, "token_delay_seconds": 0.02}]), feishu=FeishuSettings(streaming="off")
    )
    bot.api.fail_next(500, 1, times=2, method="PATCH")  # the edit fails, and fails again on the retry
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    assert [edit.status for edit in bot.api.patched()] == [500, 500]  # no edit stays the reply's only way
    working, reply = bot.api.posted()
    assert text_of(reply.card()) == ANSWER
    assert bot.api.by_uuid[working.body["uuid"]] in bot.api.deleted  # recalled, not left "Working…"
    assert [text_of(c) for c in bot.api.shown()] == [ANSWER]


async def test_streaming_off_posts_the_reply_anew_when_the_working_card_cannot_be_edited(make_bot, agent):
    bot = await make_bot(
        agent([{"content": ANSWER, "token_delay_seconds": 0.02}]), feishu=FeishuSettings(streaming="off")
    )
    bot.api.fail_next(400, 230011, method="PATCH")  # refused for good: "the message was withdrawn"
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    working, reply = bot.api.posted()
    assert text_of(json.loads(working.body["content"])) == "⏳ Working…" and text_of(reply.card()) == ANSWER
    assert bot.api.by_uuid[working.body["uuid"]] in bot.api.deleted  # recalled, not left "Working…"
    assert [text_of(c) for c in bot.api.shown()] == [ANSWER]


async def test_another_replica_continues_and_finishes_the_card_with_growing_sequences(fake_api):
    shared = SimpleNamespace(state=MemoryStore("test-live"))  # the replicas' Redis, as far as used here
    first = FeishuAdapter(feishu_settings(fake_api), gateway=shared)  # type: ignore[arg-type]
    view = LiveView(mode="card", text="Half of the answer", shown="")
    ref = await first.show_live(P2P, view, None)
    ref = await first.show_live(P2P, view.model_copy(update={"text": "Half of the answer, then"}), ref)

    # the replica that takes the job over knows only the ref (from Redis); its clock is 30 s behind
    behind = ref.model_copy(
        update={"extra": {**ref.extra, "created_ms": str(int(ref.extra["created_ms"]) + 30_000)}}
    )
    second = FeishuAdapter(feishu_settings(fake_api), gateway=shared)  # type: ignore[arg-type]
    adopted = LiveView(mode="card", text="Half of the answer, then all of it.", shown=None)
    assert await second.show_live(P2P, adopted, behind) == behind
    await second.send(P2P, TextReply(text="Half of the answer, then all of it.", live=behind))
    await second.send(P2P, TextReply(text="Half of the answer, then all of it.", live=behind))  # a retry

    calls = fake_api.cardkit_calls()
    refused = [c for c in calls if c.code == 300317]
    assert len(refused) == 1  # one refused as not growing, then a jump, then every call accepted
    accepted = [c.body["sequence"] for c in calls if c.code == 0 and cardkit_kind(c) != "create"]
    assert accepted == sorted(set(accepted))
    [shown] = fake_api.shown()
    assert text_of(shown) == "Half of the answer, then all of it." and components(shown, "markdown")
    assert len(fake_api.posted()) == 1
    await first.stop()
    await second.stop()


async def test_a_streaming_card_feishu_will_not_send_becomes_an_edited_card(make_bot, agent):
    bot = await make_bot(agent([{"content": ANSWER, "token_delay_seconds": 0.05}]))
    bot.api.fail_next(400, 230099, method="POST")  # the message naming the card entity is refused
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=20)
    refused, post = bot.api.posted()
    assert refused.status == 400 and json.loads(refused.body["content"])["type"] == "card"
    assert text_of(json.loads(post.body["content"])) == "⏳ Working…"
    assert not bot.api.cardkit_calls("content") and len(bot.api.patched()) >= 2
    assert [text_of(c) for c in bot.api.shown()] == [ANSWER]
    assert bot.adapter.live_mode(P2P) == "card"  # CardKit itself answered: tried again next run


async def test_a_part_refused_after_the_first_leaves_one_copy_of_the_reply(make_bot, agent):
    long = " ".join(f"word{i:04d}" for i in range(550))  # two cards
    bot = await make_bot(agent([{"content": long, "token_delay_seconds": 0.002}]))
    await bot.deliver(message_event("write a lot"))
    assert await asyncio.to_thread(within, 10.0, lambda: len(bot.api.cardkit_calls("content")) >= 1)
    bot.api.fail_next(400, 230025, method="POST")  # the second part of the reply is refused once
    await bot.gateway.drain(timeout=30)
    live_message = bot.api.by_uuid[bot.api.posted()[0].body["uuid"]]
    assert live_message in bot.api.deleted  # showed only the first part: recalled
    shown = bot.api.shown()
    assert len(shown) == 2 and " ".join(text_of(c) for c in shown) == long  # posted anew, once


async def test_a_part_whose_card_is_refused_follows_the_live_message_as_text(make_bot, agent):
    long = " ".join(f"word{i:04d}" for i in range(550))  # two cards
    bot = await make_bot(agent([{"content": long, "token_delay_seconds": 0.002}]))
    await bot.deliver(message_event("write a lot"))
    assert await asyncio.to_thread(within, 10.0, lambda: len(bot.api.cardkit_calls("content")) >= 1)
    bot.api.fail_next(400, 230099, method="POST")  # Feishu makes no card of the second part
    await bot.gateway.drain(timeout=30)
    assert not bot.api.deleted  # the live message keeps the first part
    [first] = bot.api.shown()
    [second] = bot.api.texts.values()
    assert f"{text_of(first)} {second}" == long  # one copy, the rest as a text message
