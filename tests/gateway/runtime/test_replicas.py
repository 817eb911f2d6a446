"""Several gateways on one Redis (replicas, restarts): dedupe, shared threads, claims, hand-over."""

from __future__ import annotations

import asyncio

from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request
from clarigate.agent.events import ToolStarted
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerStatus, InboundAnswer, Sender
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow import outage
from clarigate.gateway.runners.base import AgentUnavailable, RunInput


async def test_thread_mapping_survives_a_restart(redis_stores, make_gateway):
    first_store = redis_stores()
    first_runner = ScriptedRunner()
    first, chat = await make_gateway(first_store, first_runner)
    await chat.say("remember me", chat="c7")
    await first.drain()
    await first.stop(grace=0)
    await first_store.close()

    second_runner = ScriptedRunner()
    second, chat_again = await make_gateway(redis_stores(first_store.prefix), second_runner)
    assert await chat_again.say("still there?", chat="c7") is AcceptOutcome.ACCEPTED
    await second.drain()

    assert second_runner.calls[0].thread_id == first_runner.calls[0].thread_id


async def test_one_event_delivered_twice_to_two_replicas_runs_once(redis_stores, make_gateway):
    store = redis_stores()
    runners = [ScriptedRunner(), ScriptedRunner()]
    one, chat_one = await make_gateway(store, runners[0])
    two, chat_two = await make_gateway(redis_stores(store.prefix), runners[1])

    outcomes = await asyncio.gather(
        chat_one.say("deploy", event_id="Ev1"),
        chat_two.say("deploy", event_id="Ev1"),
        chat_one.say("deploy", event_id="Ev1"),
    )
    await one.drain()
    await two.drain()

    assert sorted(o.value for o in outcomes) == ["accepted", "duplicate", "duplicate"]
    assert len(runners[0].calls) + len(runners[1].calls) == 1
    assert chat_one.texts() + chat_two.texts() == ["You said: deploy"]


async def test_two_replicas_racing_on_one_click_give_one_run(redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    calls: list[Turn] = []

    def script(turn: Turn) -> TurnOutput:
        calls.append(turn)
        return (
            asking(question)
            if turn.response is None
            else TurnOutput(replies=[f"going {turn.response.value}"])
        )

    store = redis_stores()
    one, chat_one = await make_gateway(store, ScriptedRunner(script))
    two, chat_two = await make_gateway(redis_stores(store.prefix), ScriptedRunner(script), start=False)
    await chat_one.say("deploy")
    await one.drain()
    await two.start()
    chat_two.sent.extend(chat_one.sent)  # the second replica's user clicks the same message

    outcomes = await asyncio.gather(
        chat_one.click(0), chat_two.click(1), chat_one.click(1), chat_two.click(0)
    )
    await one.drain()
    await two.drain()

    assert [o.status for o in outcomes].count(AnswerStatus.ACCEPTED) == 1
    assert [c.response is not None for c in calls] == [False, True]


async def test_a_job_of_a_stopped_worker_is_finished_by_another_once(redis_stores, make_gateway):
    hang = asyncio.Event()
    started = asyncio.Event()

    async def stuck(turn: Turn) -> TurnOutput:
        started.set()
        await hang.wait()  # never set: this replica dies mid-run
        return TurnOutput(replies=["too late"])

    store = redis_stores()
    healthy_runner = ScriptedRunner()
    dying, chat = await make_gateway(store, ScriptedRunner(stuck))
    healthy, other_chat = await make_gateway(redis_stores(store.prefix), healthy_runner, start=False)

    assert await chat.say("long task") is AcceptOutcome.ACCEPTED
    await asyncio.wait_for(started.wait(), 5)
    await healthy.start()
    await dying.stop(grace=0)  # the run is cancelled and its job left unacknowledged
    await dying.drain(timeout=10)  # done once the healthy replica claimed and answered it

    assert [c.text for c in healthy_runner.calls] == ["long task"]
    assert chat.texts() + other_chat.texts() == ["You said: long task"]
    # the stopped replica's "working…" does not stay in the chat next to the real answer
    progress = [item.state for item in chat.of_kind("progress") + other_chat.of_kind("progress")]
    assert sorted(progress) == ["done", "done", "started", "started"]


async def test_accepting_a_message_is_one_redis_round_trip(redis_stores, make_gateway):
    store = redis_stores()
    gateway, chat = await make_gateway(store, start=False)  # no workers: count the ack path alone
    await store.ping()

    before = store.round_trips
    assert await chat.say("hello", event_id="rt-1") is AcceptOutcome.ACCEPTED
    assert await chat.say("hello", event_id="rt-1") is AcceptOutcome.DUPLICATE
    assert store.round_trips - before == 2


async def test_a_click_is_at_most_two_redis_round_trips(redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(lambda turn: asking(question) if turn.response is None else TurnOutput())
    store = redis_stores()
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()
    await gateway.pool.stop(0)  # no worker reads meanwhile: count the click alone

    before = store.round_trips
    assert (await chat.click(1, event_id="c1")).status is AnswerStatus.ACCEPTED  # lookup, then the claim
    assert store.round_trips - before == 2
    before = store.round_trips
    assert (await chat.click(1, event_id="c1")).status is AnswerStatus.DUPLICATE  # replayed
    assert (await chat.click(1, event_id="c2")).status is AnswerStatus.ALREADY_ANSWERED
    assert store.round_trips - before == 4  # each: the lookup, then its dedupe marker


async def test_a_click_after_the_adapters_own_lookup_is_two_round_trips_in_all(redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(lambda turn: asking(question) if turn.response is None else TurnOutput())
    store = redis_stores()
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()
    await gateway.pool.stop(0)
    token = chat.last_request().token

    before = store.round_trips
    view = await gateway.pending_by_token(token)  # what every adapter does on a click first
    assert view is not None
    answer = InboundAnswer(
        sender=Sender(user_id="u1"), event_id="e1", token=token, option_id=view.request.options[1].id
    )
    assert (await gateway.submit_answer(answer)).status is AnswerStatus.ACCEPTED
    assert store.round_trips - before == 2  # the lookup is reused: only the claim follows


async def test_a_stopping_replica_hands_its_jobs_back_without_waiting_for_the_stale_time(
    redis_stores, make_gateway
):
    started = asyncio.Event()

    async def stuck(turn: Turn) -> TurnOutput:
        started.set()
        await asyncio.Event().wait()
        return TurnOutput(replies=["never"])

    store = redis_stores()
    stopping, chat = await make_gateway(store, ScriptedRunner(stuck), stale_claim_seconds=600)
    await chat.say("one", chat="a")
    await chat.say("two", chat="a")  # waits for its turn behind "one"
    await asyncio.wait_for(started.wait(), 5)
    await stopping.stop(grace=0)

    # a replica that would claim only jobs idle for 10 minutes takes both over at once
    runner = ScriptedRunner()
    taker, other_chat = await make_gateway(redis_stores(store.prefix), runner, stale_claim_seconds=600)
    await stopping.drain(timeout=10)

    assert [c.text for c in runner.calls] == ["one", "two"]
    assert other_chat.texts() == ["You said: one", "You said: two"]


async def test_stopping_finishes_even_when_a_waiting_job_swallows_its_cancellation(make_gateway):
    from clarigate.gateway.store.memory import MemoryStore

    class SwallowingStore(MemoryStore):
        """Its turn check swallows a cancellation, as asyncio.wait_for on 3.11 can."""

        async def next_seq(self, order_key: str) -> int:
            try:
                await asyncio.sleep(0.5)
            except asyncio.CancelledError:
                pass
            return await super().next_seq(order_key)

    started = asyncio.Event()

    async def stuck(turn: Turn) -> TurnOutput:
        started.set()
        await asyncio.Event().wait()
        return TurnOutput(replies=["never"])

    gateway, chat = await make_gateway(SwallowingStore(), ScriptedRunner(stuck))
    await chat.say("one", chat="a")
    await chat.say("two", chat="a")  # waits for its turn behind "one", inside next_seq
    await asyncio.wait_for(started.wait(), 5)
    await asyncio.sleep(0.1)

    async with asyncio.timeout(10):  # the shutdown must not hang on the waiting job
        await gateway.stop(grace=0)
    assert gateway.pool.busy == 0


async def test_a_job_back_from_a_wait_for_the_agent_shows_working_once_it_runs_and_on_takeover(
    redis_stores, make_gateway, monkeypatch
):
    """A try that follows a hand-back for the agent away shows no "working…" before it reaches the
    agent (the person was shown it, and told the message is kept), then shows it once the run
    goes on; a takeover from a stopped replica shows its own at once."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    away, hang, started = asyncio.Event(), asyncio.Event(), asyncio.Event()
    away.set()

    class AwayThenStuck(ScriptedRunner):
        async def run_turn(self, run: RunInput) -> TurnOutput:
            if away.is_set():
                raise AgentUnavailable("the LangGraph server is down")
            started.set()
            await asyncio.sleep(0.1)
            assert run.on_event is not None
            await run.on_event(ToolStarted("search_docs", "c1"))  # the agent took the run
            await hang.wait()  # never set: this replica dies mid-run
            return TurnOutput(replies=["too late"])

    store = redis_stores()
    healthy_runner = ScriptedRunner()
    dying, chat = await make_gateway(store, AwayThenStuck())
    healthy, other_chat = await make_gateway(redis_stores(store.prefix), healthy_runner, start=False)

    assert await chat.say("long task") is AcceptOutcome.ACCEPTED
    for _ in range(500):  # the first delivery hands the job back, the person told it is kept
        if chat.of_kind("error"):
            break
        await asyncio.sleep(0.01)
    away.clear()
    await asyncio.wait_for(started.wait(), 5)  # the second delivery: back, no "working…" at first
    assert [item.state for item in chat.of_kind("progress")] == ["started", "done"]
    for _ in range(500):  # the agent's first event: it took the run, "working…" shows (once)
        if len(chat.of_kind("progress")) == 3:
            break
        await asyncio.sleep(0.01)
    assert [item.state for item in chat.of_kind("progress")] == ["started", "done", "started"]
    await healthy.start()
    await dying.stop(grace=0)
    await dying.drain(timeout=10)
    assert [item.state for item in chat.of_kind("progress")] == ["started", "done", "started", "done"]

    assert other_chat.texts() == ["You said: long task"]
    assert [item.state for item in other_chat.of_kind("progress")] == ["started", "done"]
