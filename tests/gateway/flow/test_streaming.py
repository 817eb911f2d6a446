"""Runs shown live: the answer as it is written, tool steps, and a reply that finishes the message."""

from __future__ import annotations

import asyncio
import time

import yaml

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, asking, choice_request
from clarigate.agent.events import Asking, TextDelta, ToolFinished, ToolStarted
from clarigate.agent.harness import AgentSettings, TurnOutput
from clarigate.gateway.boundary.messages import MessageRef
from clarigate.gateway.boundary.outbound_items import (
    ClarificationOut,
    ErrorReply,
    LiveEnd,
    LiveView,
    TextReply,
)
from clarigate.gateway.boundary.port import DeliveryFailed, LiveSkipped
from clarigate.gateway.flow.live import live_key
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore


class StreamingRunner(ScriptedRunner):
    """Plays ``events`` (with pauses: a float is a sleep) to ``on_event``, then returns ``output``."""

    def __init__(self, events: list[object], output: TurnOutput) -> None:
        super().__init__(lambda turn: output)
        self.events = events

    async def run_turn(self, run: RunInput) -> TurnOutput:
        for event in self.events:
            if isinstance(event, float | int):
                await asyncio.sleep(event)
            elif run.on_event is not None:
                await run.on_event(event)
        return await super().run_turn(run)


def words(text: str, pause: float) -> list[object]:
    events: list[object] = []
    for index, word in enumerate(text.split(" ")):
        events += [TextDelta(("" if index == 0 else " ") + word, "m1"), pause]
    return events


async def live_gateway(make_gateway, runner, interval: float = 0.05, **config):  # type: ignore[no-untyped-def]
    """A gateway whose test platform shows runs live; "Working…" after 1 s unless told."""
    config.setdefault("progress_after_seconds", 1.0)
    store = config.pop("store", None) or MemoryStore("t")
    return await make_gateway(store, runner, adapter_class=live_adapter(interval), **config)


def live_adapter(interval: float = 0.05) -> type[TestAdapter]:
    class Live(TestAdapter):
        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, live=True, live_interval=interval)

    return Live


def items(chat: TestAdapter) -> list[object]:
    return [item for _, item in chat.sent]


async def test_a_quick_run_is_posted_whole_without_a_live_message(make_gateway):
    runner = StreamingRunner(words("All done here.", 0), TurnOutput(replies=["All done here."]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=live_adapter(), progress_after_seconds=1.0
    )
    await chat.say("hi")
    await gateway.drain()
    assert chat.shown == []
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is None and reply.text == "All done here."


async def test_a_slow_answer_is_shown_as_it_grows_and_the_reply_finishes_that_message(make_gateway):
    answer = "The deploy finished and every check passed on the first try today."
    runner = StreamingRunner(words(answer, 0.04), TurnOutput(replies=[answer]))
    gateway, chat = await live_gateway(make_gateway, runner, 0.1)
    await chat.say("how did the deploy go?")
    await gateway.drain()
    texts = [view.text for _, view in chat.shown]
    assert len(texts) >= 2
    assert all(a != b and b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))  # only grows
    assert answer.startswith(texts[-1])
    # each update after the first knows what the message already shows (append-only APIs)
    assert [view.shown for _, view in chat.shown[1:]] == texts[:-1]
    first_ref = chat.shown[0][0]
    assert first_ref is None and all(ref is not None for ref, _ in chat.shown[1:])
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.text == answer
    assert reply.live is not None and reply.live.message_id.startswith("live-")


async def test_thousands_of_tokens_cost_calls_by_time_not_by_tokens(make_gateway):
    events: list[object] = []
    for index in range(3000):
        events.append(TextDelta(f" t{index}", "m1"))
        if index % 100 == 0:
            events.append(0.03)  # ~0.9 s of writing in all
    text = "".join(e.text for e in events if isinstance(e, TextDelta)).strip()
    runner = StreamingRunner(events, TurnOutput(replies=[text]))
    gateway, chat = await live_gateway(make_gateway, runner, 0.2)
    await chat.say("write a lot")
    await gateway.drain()
    assert 2 <= len(chat.shown) <= 8  # ~0.9 s at one update per 0.2 s, not 3,000
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == text


async def test_a_tool_step_is_shown_while_it_runs_and_cleared_when_the_answer_starts(make_gateway):
    events: list[object] = [
        ToolStarted("search_docs", "c1", "Searching the docs."),
        0.3,
        ToolFinished("search_docs", "c1"),
        *words("Found it in the guide.", 0.1),
    ]
    runner = StreamingRunner(events, TurnOutput(replies=["Found it in the guide."]))
    gateway, chat = await live_gateway(make_gateway, runner)
    await chat.say("where is it documented?")
    await gateway.drain()
    views = [view for _, view in chat.shown]
    assert views[0].status == "🔧 Searching the docs…" and views[0].text == ""
    assert views[-1].status is None and views[-1].text.startswith("Found")


async def test_a_tool_without_a_short_description_is_named_in_the_persons_language(make_gateway):
    runner = StreamingRunner([ToolStarted("lookup_orders", "c1"), 0.3], TurnOutput(replies=["好的。"]))
    gateway, chat = await live_gateway(make_gateway, runner)
    await chat.say("查一下我的订单")
    await gateway.drain()
    assert chat.shown[0][1].status == "🔧 正在使用 lookup_orders…"


async def test_streamed_text_before_a_question_is_ended_and_the_question_follows(make_gateway):
    request = choice_request("Which region?", ["eu", "us"])
    events = [*words("I can deploy to two regions.", 0.06), Asking()]
    runner = StreamingRunner(events, asking(request))
    gateway, chat = await live_gateway(make_gateway, runner)
    await chat.say("deploy it")
    await gateway.drain()
    ended, question = items(chat)
    assert isinstance(ended, TextReply) and ended.text == "I can deploy to two regions."
    assert ended.live is not None
    assert isinstance(question, ClarificationOut)


async def test_a_run_that_only_showed_progress_closes_it_before_its_question(make_gateway):
    request = choice_request("Which region?", ["eu", "us"])
    runner = StreamingRunner([ToolStarted("list_regions", "c1"), 0.3, Asking()], asking(request))
    gateway, chat = await live_gateway(make_gateway, runner)
    await chat.say("deploy it")
    await gateway.drain()
    closed, question = items(chat)
    assert isinstance(closed, LiveEnd) and closed.ref.message_id.startswith("live-")
    assert isinstance(question, ClarificationOut)


async def test_working_at_once_when_progress_after_is_zero_and_the_reply_finishes_it(make_gateway):
    gateway, chat = await make_gateway(
        MemoryStore("t"), ScriptedRunner(), adapter_class=live_adapter(), progress_after_seconds=0
    )
    await chat.say("hello")
    await gateway.drain()
    assert [view.status for _, view in chat.shown] == ["⏳ Working…"]
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == "You said: hello"


async def test_working_shows_in_the_live_message_when_nothing_else_does(make_gateway):
    runner = StreamingRunner([0.4], TurnOutput(replies=["Finally."]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=live_adapter(), progress_after_seconds=0.1
    )
    await chat.say("slow one")
    await gateway.drain()
    assert [view.status for _, view in chat.shown] == ["⏳ Working…"]
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None  # "Working…" becomes the reply


async def test_a_failed_run_keeps_what_was_written_and_says_it_failed(make_gateway):
    class Failing(StreamingRunner):
        async def run_turn(self, run: RunInput) -> TurnOutput:
            await super().run_turn(run)
            raise RuntimeError("model went away")

    runner = Failing(words("Half of an answer that", 0.06), TurnOutput())
    gateway, chat = await live_gateway(make_gateway, runner)
    await chat.say("go")
    await gateway.drain()
    ended, error = items(chat)
    assert isinstance(ended, TextReply) and ended.live is not None and ended.text == "Half of an answer that"
    assert isinstance(error, ErrorReply)


class BrokenLive(TestAdapter):
    """Its live messages fail after the first update; finishing one fails for good."""

    def __init__(self, gateway):  # type: ignore[no-untyped-def]
        super().__init__(gateway, live=True, live_interval=0.05)

    async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
        if ref is not None:
            self.shown.append((ref, view))
            raise DeliveryFailed("stream refused", permanent=True, code="streaming_failed")
        return await super().show_live(conversation, view, ref)

    async def send(self, conversation, item):  # type: ignore[no-untyped-def]
        if isinstance(item, TextReply) and item.live is not None:
            raise DeliveryFailed("message gone", permanent=True, code="message_not_found")
        return await super().send(conversation, item)


async def test_a_failing_stream_stops_updating_and_the_reply_is_posted_once(make_gateway):
    answer = "An answer that takes a while to write out."
    runner = StreamingRunner(words(answer, 0.05), TurnOutput(replies=[answer]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=BrokenLive, progress_after_seconds=1.0
    )
    await chat.say("go")
    await gateway.drain()
    assert len(chat.shown) == 2  # the first update, then the refused one: no more after it
    [reply] = items(chat)  # the refused finish was not recorded; the reply went out once, anew
    assert isinstance(reply, TextReply) and reply.live is None and reply.text == answer


async def test_streaming_off_keeps_working_and_the_whole_reply(make_gateway):
    runner = StreamingRunner(words("Slowly written words here.", 0.1), TurnOutput(replies=["Slowly."]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=live_adapter(), streaming="off", progress_after_seconds=0.1
    )
    await chat.say("go")
    await gateway.drain()
    assert chat.shown == []
    assert [item.kind for item in items(chat)] == ["progress", "progress", "text"]


async def test_a_job_taken_over_continues_the_live_message_its_first_attempt_started(make_gateway):
    store = MemoryStore("t")
    answer = "Resumed and finished after the hand-over."
    runner = StreamingRunner(words(answer, 0.05), TurnOutput(replies=[answer]))
    gateway, chat = await make_gateway(store, runner, adapter_class=live_adapter(), start=False)
    earlier = MessageRef(platform="test", chat_id="c1", message_id="live-from-the-dead-replica")
    inbound = "test:e-takeover"
    await store.set_json(live_key(inbound), earlier.model_dump(mode="json"), 60)
    # the job as another replica left it: delivered once, its run cut off midway
    await store.accept_job(
        dedupe_key=inbound,
        kind="message",
        inbound_id=inbound,
        order_key=chat.conversation().thread_key,
        payload=_message_payload(chat, "go on", "e-takeover"),
        seen_ttl=60,
    )
    jobs = await store.read_jobs("dead-replica", 1, block_ms=10)
    assert jobs and jobs[0].inbound_id == inbound
    await asyncio.sleep(0.05)
    gateway.config.stale_claim_seconds = 0.01
    await gateway.start()
    await gateway.drain(inbound_ids=[inbound], timeout=10)
    assert chat.shown[0][0] == earlier and chat.shown[0][1].shown is None  # replace, not append
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live == earlier and reply.text == answer


def _message_payload(chat: TestAdapter, text: str, event_id: str) -> str:
    from clarigate.gateway.boundary.messages import InboundMessage, MessageJob, Sender

    message = InboundMessage(
        conversation=chat.conversation(), sender=Sender(user_id="u1"), text=text, event_id=event_id
    )
    return MessageJob(message=message).model_dump_json()


async def test_the_in_process_agent_streams_its_scripted_answer_to_the_live_message(make_gateway, tmp_path):
    script = tmp_path / "script.yaml"
    answer = "Here is a considered answer, written one word at a time for you."
    script.write_text(yaml.safe_dump([{"content": answer, "token_delay_seconds": 0.03}]))
    settings = AgentSettings(model=f"scripted:{script}", checkpointer_url="memory://", data_dir=str(tmp_path))
    runner = LangGraphRunner(settings)
    gateway, chat = await live_gateway(make_gateway, runner, 0.1)
    try:
        await chat.say("answer slowly")
        await gateway.drain(timeout=20)
    finally:
        await runner.aclose()
    views: list[LiveView] = [view for _, view in chat.shown]
    assert len(views) >= 2 and answer.startswith(views[-1].text) and views[0].text
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.text == answer and reply.live is not None


def test_streaming_is_chosen_per_bot_and_overridden_per_platform(monkeypatch):
    from clarigate.gateway.runtime.config import GatewayConfig

    assert GatewayConfig().streams_on("slack")  # auto is the default
    config = GatewayConfig(streaming="off", telegram={"streaming": "auto"})
    assert not config.streams_on("slack") and not config.streams_on("feishu")
    assert config.streams_on("telegram")
    monkeypatch.setenv("CLARIGATE_FEISHU__STREAMING", "off")
    assert not GatewayConfig().streams_on("feishu") and GatewayConfig().streams_on("slack")


async def test_working_is_shown_once_and_the_first_words_do_not_wait_for_the_interval(make_gateway):
    runner = StreamingRunner([0.3, *words("At last the answer.", 0.1)], TurnOutput(replies=["At last."]))
    # an interval far longer than the run: only the first words' own short wait lets them show
    gateway, chat = await live_gateway(make_gateway, runner, 30.0, progress_after_seconds=0)
    await chat.say("go")
    await gateway.drain()
    views = [view for _, view in chat.shown]
    assert [v.status for v in views][:1] == ["⏳ Working…"] and len(views) == 2
    assert views[1].status is None and views[1].text.startswith("At")
    assert len(chat.over) == 1  # the adapter was told once that the updates are over


class MovingLive(TestAdapter):
    """Its live message moves to a new message at the second update (a stream turned into edits)."""

    def __init__(self, gateway):  # type: ignore[no-untyped-def]
        super().__init__(gateway, live=True, live_interval=0.05)

    async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
        ref = await super().show_live(conversation, view, ref)
        if len(self.shown) == 2:
            return ref.model_copy(update={"message_id": "moved"})
        return ref


async def test_a_live_message_that_moves_is_kept_for_a_hand_over_under_its_new_id(make_gateway):
    store = MemoryStore("t")
    kept: list[str] = []
    original = store.set_json

    async def set_json(key, value, ttl):  # type: ignore[no-untyped-def]
        if key.startswith("live:"):
            kept.append(value["message_id"])
        await original(key, value, ttl)

    store.set_json = set_json  # type: ignore[method-assign]
    answer = "Words that keep coming for a little while longer."
    runner = StreamingRunner(words(answer, 0.05), TurnOutput(replies=[answer]))
    gateway, chat = await make_gateway(store, runner, adapter_class=MovingLive, progress_after_seconds=1.0)
    await chat.say("go")
    await gateway.drain()
    assert kept[0].startswith("live-") and kept[1:] == ["moved"]  # first, then once more when it moved
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.live.message_id == "moved"
    assert [ref.message_id for ref in chat.over] == ["moved"]


async def test_a_run_that_ends_just_after_its_first_words_is_finished_by_its_reply_alone(make_gateway):
    runner = StreamingRunner([0.3, *words("Quick at the end.", 0.01)], TurnOutput(replies=["Quick."]))
    gateway, chat = await live_gateway(make_gateway, runner, progress_after_seconds=0)
    await chat.say("go")
    await gateway.drain()
    assert [view.status for _, view in chat.shown] == ["⏳ Working…"]  # no update the reply repeats
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None


class BusyLive(TestAdapter):
    """A platform whose budget has no room for the first ``skips`` updates after the message is
    made (``LiveSkipped``, the next slot ``retry_in`` away); when each update was asked for."""

    def __init__(self, gateway, skips: int = 2, retry_in: float = 0.1):  # type: ignore[no-untyped-def]
        super().__init__(gateway, live=True, live_interval=30.0)
        self.skips, self.retry_in = skips, retry_in
        self.asked: list[tuple[float, LiveView, bool]] = []  # when, what, whether it went out

    async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
        skipped = ref is not None and self.skips > 0
        self.asked.append((time.monotonic(), view, not skipped))
        if skipped:
            self.skips -= 1
            raise LiveSkipped(self.retry_in)
        return await super().show_live(conversation, view, ref)


async def test_first_words_the_budget_skipped_are_tried_again_at_the_next_slot(make_gateway):
    runner = StreamingRunner(
        [0.3, *words("At last the answer comes.", 0.1), 0.5], TurnOutput(replies=["At last."])
    )
    # an interval far longer than the run: only a try at the next slot shows the first words
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=BusyLive, progress_after_seconds=0
    )
    await chat.say("go")
    await gateway.drain()
    assert isinstance(chat, BusyLive)
    working, *tries = chat.asked
    assert working[1].status == "⏳ Working…" and working[2]
    assert [went for _, _, went in tries] == [False, False, True]  # two skipped, the third shown
    assert all(view.text.startswith("At") for _, view, _ in tries)
    for (before, _, _), (after, _, _) in zip(tries, tries[1:], strict=False):
        assert chat.retry_in * 0.9 <= after - before <= 1.5  # at the slot named, not before or long after
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == "At last."


async def test_a_later_update_the_budget_skipped_waits_for_the_next_update(make_gateway):
    class LaterBusy(BusyLive):
        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, skips=0, retry_in=0.01)

        def live_interval(self, conversation, mode):  # type: ignore[no-untyped-def]
            return 0.4

        async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
            self.skips = 1 if len(self.asked) == 2 else 0  # the update after the first words
            return await super().show_live(conversation, view, ref)

    # words keep coming (one before the slot named): the next update carries the skipped text
    runner = StreamingRunner(words(" ".join(f"w{i}" for i in range(50)), 0.025), TurnOutput(replies=["Ten."]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=LaterBusy, progress_after_seconds=0
    )
    await chat.say("go")
    await gateway.drain()
    assert isinstance(chat, LaterBusy)
    asked = [(at, went) for at, _, went in chat.asked]
    assert [went for _, went in asked[:4]] == [True, True, False, True]
    assert asked[3][0] - asked[2][0] >= 0.35  # an interval on, not at the slot 0.01 s away
    [reply] = items(chat)
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == "Ten."


async def test_a_step_skipped_by_the_budget_is_shown_while_the_tool_runs(make_gateway):
    class StepBusy(BusyLive):
        """No room for the one update that shows the tool's step (a slot free 0.1 s later)."""

        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, skips=0, retry_in=0.1)

        def live_interval(self, conversation, mode):  # type: ignore[no-untyped-def]
            return 0.2

        async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
            step = view.status is not None and "🔧" in view.status
            self.skips = 1 if step and not any(seen.status for _, seen, _ in self.asked) else 0
            return await super().show_live(conversation, view, ref)

    # the answer's first words, then a silent tool step of 3 s: no later update carries the step
    events = [
        *words("Let me look that up.", 0.05),
        0.4,
        ToolStarted("search_docs", "c1", "Searching the docs."),
        3.0,
    ]
    runner = StreamingRunner(events, TurnOutput(replies=["Let me look that up. Found it."]))
    gateway, chat = await make_gateway(
        MemoryStore("t"), runner, adapter_class=StepBusy, progress_after_seconds=1.0
    )
    await chat.say("where is it?")
    await gateway.drain()
    assert isinstance(chat, StepBusy)
    steps = [(at, went) for at, view, went in chat.asked if view.status == "🔧 Searching the docs…"]
    assert [went for _, went in steps] == [False, True], chat.asked  # tried once more, then shown
    assert chat.retry_in * 0.9 <= steps[1][0] - steps[0][0] <= 0.5  # at the slot named
    assert len(chat.asked) <= 4  # the first words (one or two updates), the step skipped, then shown
