"""A command that ran but whose reply was lost, seen from the chat: nothing lost or doubled.

A proxy between the gateway and Redis cuts the connection right after Redis ran a command, before
its reply reaches the gateway (a network blip). The client sends it again on a new connection and
the second run recognizes the first one's effect: the accept and a click's dedupe marker count as
accepted (not "duplicate"), a claim as claimed (not "already answered" by the clicker themselves).
Reading new jobs is not re-sent; the entries its lost reply carried are read back. Each message is
answered once, each answer run once. Every store method on its own: test_store_replay.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerStatus

from ..redis_proxy import ReplyDroppingProxy


@pytest.fixture
async def proxy() -> AsyncIterator[ReplyDroppingProxy]:
    """A proxy to the test Redis on 127.0.0.1:6379."""
    proxy = ReplyDroppingProxy()
    await proxy.start()
    yield proxy
    await proxy.close()


def proxied_store(redis_stores, proxy: ReplyDroppingProxy):
    return redis_stores(url=proxy.url)  # same Redis, through the proxy


async def test_an_accept_whose_reply_was_lost_is_answered_once(proxy, redis_stores, make_gateway):
    runner = ScriptedRunner()
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner, start=False)
    await store.ping()

    proxy.arm(store._accept.sha)
    outcome = await chat.say("hello", event_id="blip-1")
    assert proxy.dropped == 1
    await gateway.start()
    await gateway.drain(inbound_ids=["test:blip-1"])

    assert outcome is AcceptOutcome.ACCEPTED  # the retry recognized its own dedupe key
    assert [c.text for c in runner.calls] == ["hello"]
    assert chat.texts() == ["You said: hello"]


async def test_a_claim_whose_reply_was_lost_runs_the_answer_once(proxy, redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["going"])
    )
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()

    proxy.arm(store._claim.sha)
    outcome = await chat.click(1)
    assert proxy.dropped == 1
    await gateway.drain(inbound_ids=[f"answer:{question.request_id}"])

    # the retry recognized its own claim: the clicker is told their answer counts
    assert outcome.status is AnswerStatus.ACCEPTED and outcome.view.answered_by.user_id == "u1"
    assert [c.response.value for c in runner.calls if c.response] == ["us"]
    assert chat.texts() == ["going"]


async def test_a_typed_reply_whose_claim_reply_was_lost_answers_it(proxy, redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.text == "deploy" else TurnOutput(replies=["going"])
    )
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()

    proxy.arm(store._claim.sha)
    await chat.say("us")
    await gateway.drain()

    assert proxy.dropped == 1
    # the agent got the structured answer (not the raw text with no answer), and the question closed
    answered = runner.calls[-1]
    assert answered.response is not None and answered.response.value == "us"
    thread_id = await store.thread_for_chat(chat.conversation().thread_key, 3600)
    assert await store.pending_for_thread(thread_id) is None
    assert len(runner.calls) == 2


async def test_a_read_whose_reply_was_lost_still_runs_its_messages(proxy, redis_stores, make_gateway):
    runner = ScriptedRunner()
    store = proxied_store(redis_stores, proxy)
    # a stale claim (which would also find a stranded entry) comes far too late to hide a loss
    gateway, chat = await make_gateway(store, runner, stale_claim_seconds=60)
    await chat.say("warm up", event_id="w")
    await gateway.drain()

    proxy.arm(b"XREADGROUP")  # the blocking read that delivers the next message loses its reply
    await chat.say("hello", event_id="after-blip")
    await gateway.drain(timeout=5)

    assert proxy.dropped == 1
    assert chat.texts() == ["You said: warm up", "You said: hello"]  # not stranded until a stale claim
    assert [c.text for c in runner.calls] == ["warm up", "hello"]


async def test_a_click_whose_dedupe_reply_was_lost_still_counts(proxy, redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["going"])
    )
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()

    proxy.arm(b"interaction:")  # the click's "seen" marker is set, its reply lost, the SET re-sent
    outcome = await chat.click(0)
    assert proxy.dropped == 1
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED  # not dropped as a duplicate of itself
    assert chat.texts() == ["going"]
