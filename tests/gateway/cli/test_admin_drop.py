"""``clarigate admin backlog --drop`` of jobs read or not yet read, and what the listings print."""

from __future__ import annotations

import os
import sys

import pytest
from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.cli.admin import _table
from clarigate.gateway.store.keys import GROUP

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


@pytest.fixture
async def redis():
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    yield client
    await client.aclose()


async def entries(redis, store) -> list[str]:
    """The stream's entry ids, oldest first."""
    return [entry_id for entry_id, _ in await redis.xrange(store.keys.jobs)]


async def accept(redis, store, inbound_id: str) -> str:
    """Queue a job on chat ``o``; its entry id."""
    await store.accept_job(
        dedupe_key=inbound_id, kind="message", inbound_id=inbound_id, order_key="o", payload="{}", seen_ttl=60
    )
    return (await entries(redis, store))[-1]


async def test_a_job_not_read_yet_is_dropped_for_real_and_its_thread_goes_on(
    make_gateway, redis_stores, cli, redis
):
    """Dropped before any worker read it: it never runs, and the chat's next job is not stuck behind it."""
    store = redis_stores()
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, start=False)
    await chat.say("first", chat="a")
    await chat.say("second", chat="a")
    await redis.xgroup_create(store.keys.jobs, GROUP, id="0")  # the workers' group, nothing read yet
    before = await entries(redis, store)
    code, dropped = await cli(store.prefix, "backlog", "--drop", before[0], "--yes")
    assert code == 0 and dropped["dropped"] is True
    assert await entries(redis, store) == [before[1]]
    assert dropped["was"] == "not read yet"
    assert await store.is_done(dropped["inbound_id"])  # a redelivery of it is not run

    gateway.config.stale_claim_seconds = 1000.0
    gateway.pool.stale_after = 1000.0
    await gateway.start()
    await gateway.drain(timeout=20)
    assert [c.text for c in runner.calls] == ["second"]  # "first" never ran, "second" was not stuck


async def test_a_job_dropped_before_any_read_is_not_a_redis_failure(redis_stores, cli, redis):
    """No consumer group yet (no worker ever read): the job is found as not read yet, not "NOGROUP"."""
    store = redis_stores()
    first, second = await accept(redis, store, "test:n1"), await accept(redis, store, "test:n2")
    code, text = await cli(store.prefix, "backlog", "--drop", first, "--yes", as_json=False)
    assert code == 0 and "was: not read yet" in text, text
    assert await entries(redis, store) == [second]
    assert await store.next_seq("o") >= 2  # the second may run
    assert [job.inbound_id for job in await store.read_jobs("w1", count=5, block_ms=0)] == ["test:n2"]


async def test_a_held_job_dropped_leaves_no_admin_consumer(redis_stores, cli, redis):
    store = redis_stores()
    entry_id = await accept(redis, store, "test:h1")
    await store.read_jobs("dead-replica", count=1, block_ms=0)
    code, dropped = await cli(store.prefix, "backlog", "--drop", entry_id, "--yes")
    assert code == 0 and await entries(redis, store) == [] and await store.is_done("test:h1")
    consumers = {c["name"]: c["pending"] for c in (await cli(store.prefix, "consumers"))[1]}
    assert consumers == {"dead-replica": 0}  # no "clarigate-admin" consumer left behind
    assert dropped["was"] == "held by dead-replica"


async def test_no_at_the_question_says_nothing_changed(redis_stores, cli, monkeypatch, redis):
    store = redis_stores()
    entry_id = await accept(redis, store, "test:q1")

    class Terminal:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Terminal())
    monkeypatch.setattr("builtins.input", lambda question: "no")
    code, text = await cli(store.prefix, "backlog", "--drop", entry_id, as_json=False)
    assert code == 1 and "nothing changed" in text
    assert await entries(redis, store) == [entry_id]


async def test_listings_name_the_bot_id_they_read(redis_stores, cli):
    bot_id = redis_stores().prefix
    for command in ("threads", "pending", "consumers"):
        assert await cli(bot_id, command, as_json=False) == (0, f"bot {bot_id}: (none)\n")
    code, text = await cli(bot_id, "backlog", as_json=False)
    assert code == 0 and text.startswith(f"bot {bot_id}:\nlength: 0\n")


def test_a_multi_line_question_stays_on_its_row():
    rows = [{"request_id": "r1", "question": "Which region?\n\n  eu or us\n", "age_seconds": 3}]
    lines = _table(rows).splitlines()
    assert len(lines) == 2 and lines[1].split()[1:] == ["Which", "region?", "eu", "or", "us", "3"]
