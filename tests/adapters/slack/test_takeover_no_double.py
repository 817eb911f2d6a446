"""A reply Slack took just before its replica died is not posted again by the replica that takes
the job over: it is found in the conversation by the delivery id in its message metadata.

Two gateways on one real Redis, the real slack_sdk against the fake Slack (which answers
``conversations.replies`` / ``conversations.history`` with metadata as Slack documents them).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import AsyncIterator

import pytest
from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.store.redis import RedisStore

from ...gateway.conftest import delete_prefix
from ...gateway.jobs.crash import abandon, eventually
from ...gateway.store.test_store_connection import free_port, listening, redis_binary
from ...gateway.tcp_proxy import OutageProxy
from .conftest import MakeWorld

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
QUICK = {"stale_claim_seconds": 0.5, "streaming": "off", "progress_after_seconds": 60.0}
LONG = "\n\n".join(f"Paragraph {i}: " + "word " * 150 for i in range(12))  # several messages


@pytest.fixture
async def prefix() -> AsyncIterator[str]:
    name = f"test-takeover-{uuid.uuid4().hex[:10]}"
    yield name
    await delete_prefix(REDIS_URL, name)


def replies(fake, text_start: str) -> list[dict]:
    return [m for m in fake.of("chat.postMessage") if str(m.get("text", "")).startswith(text_start)]


def dies_before_noting(store: RedisStore) -> RedisStore:
    """``store`` whose replica dies once a job's last item was posted: the note that completes the
    job (and stands for that item's delivery) is never written."""

    async def never(*args: object) -> None:
        await asyncio.Event().wait()

    store.complete_job = never  # type: ignore[method-assign]
    return store


async def crash_after_post(make_world: MakeWorld, prefix: str, say, reply: str):
    """Replica one posts the reply (Slack takes it) and dies before noting it; replica two starts."""
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[reply]))
    one = await make_world(runner, store=dies_before_noting(RedisStore(REDIS_URL, prefix)), **QUICK)
    await say(one)
    await eventually(lambda: replies(one.fake, reply))  # Slack took it
    await abandon(one.gateway)
    store = RedisStore(REDIS_URL, prefix)
    two = await make_world(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), store=store, **QUICK)
    reads = ("conversations.history", "conversations.replies")
    await eventually(lambda: sum(two.fake.arrived(m) for m in reads) > 0)
    await eventually(lambda: _done(store))
    return one, two


async def _done(store: RedisStore) -> bool:
    """True once a job of this bot was completed (its done marker is in Redis)."""
    client = Redis.from_url(REDIS_URL)
    try:
        return bool([key async for key in client.scan_iter(match=f"{store.prefix}:done:*")])
    finally:
        await client.aclose()


async def test_a_dm_reply_posted_before_the_crash_is_not_posted_again(make_world: MakeWorld, prefix: str):
    async def say(world):
        await world.user.dm("hello")

    _, two = await crash_after_post(make_world, prefix, say, "the answer")

    assert len(replies(two.fake, "the answer")) == 1
    assert [m["text"] for m in two.fake.shown()] == ["the answer"]
    assert two.fake.arrived("conversations.history") >= 1  # read back, with the metadata


async def test_a_thread_reply_posted_before_the_crash_is_not_posted_again(make_world: MakeWorld, prefix: str):
    async def say(world):
        await world.user.mention("hello", channel="C1")

    _, two = await crash_after_post(make_world, prefix, say, "the answer")

    assert len(replies(two.fake, "the answer")) == 1
    assert two.fake.arrived("conversations.replies") >= 1


async def test_a_long_reply_whose_last_part_is_missing_is_finished(make_world: MakeWorld, prefix: str):
    """Parts 1..n-1 were posted and their note lost: the last part is not there, so the reply is
    posted (the parts Redis remembers as posted are skipped)."""

    async def say(world):
        await world.user.dm("long one")

    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[LONG]))
    one = await make_world(runner, store=RedisStore(REDIS_URL, prefix), **QUICK)
    await say(one)
    await eventually(lambda: _done(one.gateway.store))
    posted = len(one.fake.of("chat.postMessage"))
    assert posted > 1  # the reply was several messages, each with its part in the metadata
    metas = [m["metadata"]["event_payload"] for m in one.fake.of("chat.postMessage")]
    assert [m["part"] for m in metas] == list(range(posted))
    assert {m["parts"] for m in metas} == {posted}


async def test_without_the_history_scope_the_reply_is_sent(make_world: MakeWorld, prefix: str):
    """Slack refuses the read (``missing_scope``): the replica cannot tell, so it sends."""

    async def say(world):
        world.fake.missing_scopes.add("im:history")
        await world.user.dm("hello")

    _, two = await crash_after_post(make_world, prefix, say, "the answer")

    assert len(replies(two.fake, "the answer")) == 2  # the documented window without the scope


async def test_a_reply_whose_read_redis_lost_is_not_posted_again(make_world: MakeWorld, prefix: str):
    """Redis restarts and loses its last writes (``appendfsync everysec``): the job's read, its
    recorded reply and the note of the post are gone, so the job is read again as new. The
    replica reading it right after the outage looks for the reply on Slack first."""
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=["the answer"]))
    one = await make_world(runner, store=dies_before_noting(RedisStore(REDIS_URL, prefix)), **QUICK)
    await one.user.dm("hello")
    await eventually(lambda: replies(one.fake, "the answer"))
    await abandon(one.gateway)
    await lose_everything_after_the_accept(prefix)

    proxy = OutageProxy(6379)
    await proxy.start()
    await proxy.cut()  # the replica meets the restart: its calls fail for a moment
    store = RedisStore(f"redis://127.0.0.1:{proxy.port}/0", prefix)
    two = await make_world(
        ScriptedRunner(lambda turn: TurnOutput(replies=["the answer"])), store=store, **QUICK
    )
    # the premise: the replica met the outage (a busy machine may start it after a fixed sleep)
    await eventually(lambda: two.gateway.pool._unreachable_at is not None)
    await proxy.restore()
    await eventually(lambda: _done(store))

    assert len(replies(two.fake, "the answer")) == 1
    assert two.fake.arrived("conversations.history") >= 1


async def lose_everything_after_the_accept(prefix: str) -> None:
    """Redis as it was right after the message was accepted: the entry unread, nothing recorded."""
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        jobs = f"{prefix}:jobs"
        (entry_id, _), *_ = await client.xrange(jobs)
        await client.xack(jobs, "workers", entry_id)
        await client.xgroup_setid(jobs, "workers", "0")
        keys = [k async for k in client.scan_iter(match=f"{prefix}:*") if k.split(":")[1] in ("out", "state")]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()


async def test_a_question_shown_as_text_before_the_crash_is_not_asked_again(
    make_world: MakeWorld, prefix: str
):
    """Slack refused the question's blocks, its text went out instead, and the replica died: the
    replica taking over finds that text (its own delivery id) and does not ask natively too."""
    question = choice_request("Which database?", ["PostgreSQL", "MySQL"])

    async def say(world):
        world.fake.refuse_next("invalid_blocks", {"chat.postMessage"})  # the native question
        await world.user.dm("set it up")

    runner = ScriptedRunner(lambda turn: TurnOutput(request=question))
    one = await make_world(runner, store=dies_before_noting(RedisStore(REDIS_URL, prefix)), **QUICK)
    await say(one)
    await eventually(lambda: len(one.fake.of("chat.postMessage")) == 1)  # the text, after the refusal
    await abandon(one.gateway)

    store = RedisStore(REDIS_URL, prefix)
    two = await make_world(ScriptedRunner(lambda turn: TurnOutput(request=question)), store=store, **QUICK)
    await eventually(lambda: _done(store))

    assert len(two.fake.of("chat.postMessage")) == 1  # the text, once; no native question after it
    assert "Which database?" in two.fake.of("chat.postMessage")[0]["text"]


async def test_across_a_redis_restart_with_the_documented_aof_nothing_is_posted_twice(
    make_world: MakeWorld, tmp_path
):
    """Redis (``appendonly yes``, ``appendfsync always``) killed and started again while a job
    whose reply Slack took is left by its dead replica: the job, its recorded reply and the
    messages answered before are all still there, and the replica that takes the job over posts
    nothing twice."""
    port = free_port()
    args = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), "--save", ""]
    args += ["--appendonly", "yes", "--appendfsync", "always"]
    url, prefix = f"redis://127.0.0.1:{port}/0", "restart"
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # noqa: ASYNC220
    try:
        await eventually(lambda: listening(port))
        runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"re: {turn.text}"]))
        first = await make_world(runner, store=RedisStore(url, prefix), **QUICK)
        await first.user.dm("one")
        await eventually(lambda: replies(first.fake, "re: one"))
        await eventually(lambda: first.gateway.pool.busy == 0)
        dies_before_noting(first.gateway.store)  # from here on, it dies before noting a job done
        await first.user.dm("two")
        await eventually(lambda: replies(first.fake, "re: two"))  # Slack took it; never noted
        await abandon(first.gateway)

        server.kill()  # Redis crashes and comes back
        server.wait()
        server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)  # noqa: ASYNC220
        await eventually(lambda: listening(port))
        store = RedisStore(url, prefix)
        second = await make_world(
            ScriptedRunner(lambda turn: TurnOutput(replies=["never"])), store=store, **QUICK
        )
        await eventually(lambda: second.fake.arrived("conversations.history") > 0)
        await second.user.dm("three")
        await eventually(lambda: replies(second.fake, "never"))

        texts = [m["text"] for m in second.fake.of("chat.postMessage")]
        assert texts == ["re: one", "re: two", "never"]  # one and two once each, three answered
    finally:
        server.kill()
        server.wait()


async def test_a_question_found_after_the_crash_is_still_closed_when_answered(
    make_world: MakeWorld, prefix: str
):
    """The native question Slack took before its replica died is found by the replica taking
    over, not asked again, and remembered there: a typed answer closes that very message."""
    question = choice_request("Which database?", ["PostgreSQL", "MySQL"])
    runner = ScriptedRunner(lambda turn: TurnOutput(request=question))
    dying = dies_before_noting(RedisStore(REDIS_URL, prefix))
    dying.set_message_ref = dying.complete_job  # type: ignore[method-assign] (dies before noting its message)
    one = await make_world(runner, store=dying, **QUICK)
    await one.user.dm("set it up")
    await eventually(lambda: len(one.fake.of("chat.postMessage")) == 1)  # Slack took the question
    asked = one.fake.posted(0)
    await abandon(one.gateway)

    store = RedisStore(REDIS_URL, prefix)
    answered = ScriptedRunner(lambda turn: TurnOutput(replies=[f"using {turn.text}"]))
    two = await make_world(answered, store=store, **QUICK)
    await eventually(lambda: _done(store))
    assert len(two.fake.of("chat.postMessage")) == 1  # not asked again
    pending = await store.get_pending(question.request_id)
    assert pending is not None and pending.message_ref is not None
    assert pending.message_ref.message_id == asked["ts"]

    await two.user.dm("PostgreSQL")
    await eventually(lambda: replies(two.fake, "using"))
    assert two.fake.edits(asked["ts"]), "the question's own message is updated once answered"
