"""'Working…' shows only once a run outlasts ``progress_after_seconds``, and never stays behind."""

from __future__ import annotations

import asyncio
import logging

from clarigate.adapters.testing import ScriptedRunner, TestAdapter
from clarigate.agent.events import ToolStarted
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import Conversation, MessageRef
from clarigate.gateway.boundary.outbound_items import Outbound, ProgressUpdate, TextReply
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow import outage, run_progress
from clarigate.gateway.runners.base import AgentUnavailable, RunInput
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore


def sequence(chat: TestAdapter) -> list[tuple[str, str | None]]:
    return [(item.kind, getattr(item, "state", None)) for _, item in chat.sent]


def slow(seconds: float, reply: str = "done") -> ScriptedRunner:
    async def script(turn):
        await asyncio.sleep(seconds)
        return TurnOutput(replies=[reply])

    return ScriptedRunner(script)


async def test_a_quick_reply_comes_without_any_working_indicator_by_default(make_gateway):
    assert GatewayConfig().progress_after_seconds == 1.0  # what an operator gets unless they set it
    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(), progress_after_seconds=1.0)
    await chat.say("hello")
    await gateway.drain()
    await asyncio.sleep(1.2)  # a timer left armed would show "working…" now
    assert sequence(chat) == [("text", None)]


async def test_a_run_outlasting_the_delay_shows_working_then_clears_it_before_the_reply(make_gateway):
    gateway, chat = await make_gateway(MemoryStore("t"), slow(0.3), progress_after_seconds=0.05)
    await chat.say("take your time")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("text", None)]
    started, done = chat.sent[0][1], chat.sent[1][1]
    assert isinstance(started, ProgressUpdate) and isinstance(done, ProgressUpdate)
    assert done.ref is not None and done.ref == chat.refs[0]  # the shown message is the one cleared


class SlowToShowAdapter(TestAdapter):
    """Its "working…" message takes a while to post (a slow platform API)."""

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        if isinstance(item, ProgressUpdate) and item.state == "started":
            await asyncio.sleep(0.3)
        return await super().send(conversation, item)


async def test_a_run_ending_while_working_is_being_posted_still_clears_it(make_gateway):
    gateway, chat = await make_gateway(
        MemoryStore("t"), slow(0.1), progress_after_seconds=0.02, adapter_class=SlowToShowAdapter
    )
    await chat.say("quick-ish")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("text", None)]
    done = chat.sent[1][1]
    assert isinstance(done, ProgressUpdate) and done.ref == chat.refs[0]


async def test_a_failed_long_run_clears_working_and_says_so(make_gateway):
    async def failing(turn):
        await asyncio.sleep(0.2)
        raise RuntimeError("model down")

    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(failing), progress_after_seconds=0.05)
    await chat.say("try")
    await gateway.drain()
    assert sequence(chat) == [("progress", "started"), ("progress", "done"), ("error", None)]


async def test_the_try_that_reaches_the_agent_after_it_was_away_shows_working_again(
    make_gateway, monkeypatch, caplog
):
    """Two tries handed back (the agent away), then the agent back with a slow run: the person
    sees "working…" again after "your message is kept", before the answer; the try handed back
    in between shows none."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")

    def handed_back() -> int:
        return sum("kept for later" in record.getMessage() for record in caplog.records)

    class AwayTwiceThenSlow(ScriptedRunner):
        async def run_turn(self, run: RunInput) -> TurnOutput:
            if handed_back() < 2:
                raise AgentUnavailable("the LangGraph server is down")
            assert run.on_event is not None  # a held try hears the run's events, live or not
            await run.on_event(ToolStarted("search_docs", "c1"))  # the agent took the run
            await asyncio.sleep(1.0)
            return TurnOutput(replies=["done at last"])

    gateway, chat = await make_gateway(MemoryStore("t"), AwayTwiceThenSlow())
    await chat.say("long task")
    await gateway.drain(timeout=30)

    assert handed_back() == 2
    assert sequence(chat) == [
        ("progress", "started"),  # the first try: shown at once (``progress_after_seconds`` 0)
        ("error", None),  # "your message is kept…"
        ("progress", "done"),
        ("progress", "started"),  # the try that ran: shown on the agent's first event
        ("progress", "done"),
        ("text", None),
    ]


async def test_a_quick_answer_once_the_agent_is_back_shows_no_working_again(
    make_gateway, monkeypatch, caplog
):
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")

    def away_once(turn):
        if not any("kept for later" in record.getMessage() for record in caplog.records):
            raise AgentUnavailable("the LangGraph server is down")
        return TurnOutput(replies=["quick"])

    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(away_once))
    await chat.say("hello")
    await gateway.drain(timeout=30)
    await asyncio.sleep(1.0)  # a timer left armed would show "working…" now

    assert sequence(chat) == [("progress", "started"), ("error", None), ("progress", "done"), ("text", None)]


async def test_a_live_message_starts_again_once_the_agent_back_takes_the_run(
    make_gateway, monkeypatch, caplog
):
    """Where runs show live: the try after the hand-back starts its live message ("Working…") on
    the agent's first event, after "your message is kept" and before the answer."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")

    class AwayOnceThenStreaming(ScriptedRunner):
        async def run_turn(self, run: RunInput) -> TurnOutput:
            if not any("kept for later" in record.getMessage() for record in caplog.records):
                raise AgentUnavailable("the LangGraph server is down")
            assert run.on_event is not None
            await run.on_event(ToolStarted("search_docs", "c1"))
            await asyncio.sleep(0.3)  # far shorter than REACHED_AFTER: the event started it
            return TurnOutput(replies=["found it"])

    class Live(TestAdapter):
        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, live=True, live_interval=0.05)

    gateway, chat = await make_gateway(MemoryStore("t"), AwayOnceThenStreaming(), adapter_class=Live)
    await chat.say("look it up")
    await gateway.drain(timeout=30)

    kinds = [item.kind for _, item in chat.sent]
    assert kinds == ["error", "live_end", "text"]  # kept, the first try's message closed, the answer
    working = [view.status for _, view in chat.shown].count("⏳ Working…")
    assert working == 2  # the first try's, and the try that ran (none at the try refused between)
    reply = chat.sent[-1][1]
    assert isinstance(reply, TextReply) and reply.live is not None and reply.text == "found it"
    assert reply.live != chat.sent[1][1].ref  # a new live message: the first try's was closed


async def test_a_held_live_message_slow_to_show_is_ended_when_the_run_ends_meanwhile(
    make_gateway, monkeypatch, caplog
):
    """The try after the hand-back starts its live message ("Working…"), the platform takes longer
    to show it than a run's progress is given to clear (rate limited), and the run ends meanwhile:
    the message is still ended once it shows; no "Working…" is left beside the answer."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)
    monkeypatch.setattr(run_progress, "CLEAR_PROGRESS_SECONDS", 0.1, raising=False)  # a cap, if any
    monkeypatch.setattr(run_progress, "REACHED_AFTER", 0.05)
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")

    def handed_back() -> bool:
        return any("kept for later" in record.getMessage() for record in caplog.records)

    class SlowToShowLive(TestAdapter):
        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, live=True, live_interval=0.05)
            self.made: list[MessageRef] = []

        async def show_live(self, conversation, view, ref):  # type: ignore[no-untyped-def]
            if handed_back():
                await asyncio.sleep(0.5)
            shown = await super().show_live(conversation, view, ref)
            if ref is None and shown is not None:
                self.made.append(shown)
            return shown

    async def away_once_then_slow(turn):
        if not handed_back():
            raise AgentUnavailable("the LangGraph server is down")
        await asyncio.sleep(0.2)  # past REACHED_AFTER, while "Working…" is on its way
        return TurnOutput(replies=["done at last"])

    gateway, chat = await make_gateway(
        MemoryStore("t"), ScriptedRunner(away_once_then_slow), adapter_class=SlowToShowLive
    )
    await chat.say("long task")
    await gateway.drain(timeout=30)
    await asyncio.sleep(0.6)  # a show still on its way would land now

    assert len(chat.made) == 2  # the first try's live message, and the held try's
    ended = [item.ref for _, item in chat.sent if item.kind == "live_end"]
    answer = chat.sent[-1][1]
    assert isinstance(answer, TextReply) and answer.text == "done at last"
    assert all(ref in ended or ref == answer.live for ref in chat.made)  # none left "Working…"


async def test_a_held_try_refused_slowly_shows_no_working(make_gateway, monkeypatch, caplog):
    """An agent away may refuse slowly (a connect timeout, a slow proxy's 5xx): the try it refused
    shows no "working…" between "your message is kept" and the answer."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")

    def handed_back() -> int:
        return sum("kept for later" in record.getMessage() for record in caplog.records)

    async def refused_then_slowly_then_back(turn):
        if handed_back() == 0:
            raise AgentUnavailable("the LangGraph server is down")
        if handed_back() == 1:
            await asyncio.sleep(0.7)  # a connect timeout
            raise AgentUnavailable("the LangGraph server did not answer")
        return TurnOutput(replies=["here"])

    gateway, chat = await make_gateway(MemoryStore("t"), ScriptedRunner(refused_then_slowly_then_back))
    await chat.say("hello")
    await gateway.drain(timeout=30)

    assert handed_back() == 2
    assert sequence(chat) == [("progress", "started"), ("error", None), ("progress", "done"), ("text", None)]
