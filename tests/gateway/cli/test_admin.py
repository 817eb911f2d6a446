"""``clarigate admin`` against the real Redis: what an operator sees and what their changes do."""

from __future__ import annotations

import asyncio
import os

import pytest

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.cli.admin_chats import chat_key
from clarigate.gateway.cli.admin_store import Admin, AdminError
from clarigate.gateway.runtime.config import GatewayConfig

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def script(turn):
    if turn.response is None:
        return asking(choice_request("Which region?", ["eu", "us"]))
    return TurnOutput(replies=[f"got: {turn.response.response_kind}"])


async def test_threads_pending_and_cancel(make_gateway, redis_stores, cli):
    store = redis_stores()
    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy", chat="ops")
    await gateway.drain()
    prefix = store.prefix

    code, threads = await cli(prefix, "threads", "--chat", "ops")
    assert code == 0 and len(threads) == 1
    (thread,) = threads
    assert thread["chat"] == "test:w1:ops:-" and thread["thread_id"] == runner.calls[0].thread_id
    assert thread["idle_seconds"] is not None and thread["idle_seconds"] < 60
    assert thread["open_request"] == chat.last_request().request.request_id
    assert (await cli(prefix, "threads", "--chat", "nowhere"))[1] == []

    code, pending = await cli(prefix, "pending")
    assert [(p["question"], p["chat"]) for p in pending] == [("Which region?", "test:w1:ops:-")]

    config = GatewayConfig(redis_url=REDIS_URL, bot_id=prefix)
    async with Admin(config) as admin:  # as the CLI does, with the platform's adapter to close it
        result = await admin.cancel(pending[0]["request_id"], {"test": chat})
    assert result["message_closed"] is True
    assert chat.closed()[-1].answered_line == "✖ Cancelled by an operator"
    await gateway.drain(inbound_ids=[f"answer:{pending[0]['request_id']}"])
    assert len(chat.closed()) == 1  # closed here: the replica does not close it again
    assert runner.calls[-1].response.response_kind == "declined"  # the agent was told
    assert chat.texts()[-1] == "got: declined"
    assert (await cli(prefix, "pending"))[1] == []
    code, text = await cli(prefix, "pending", "--cancel", pending[0]["request_id"], as_json=False)
    assert code == 1 and "no open clarification" in text


async def test_cancel_without_the_platform_configured_says_why_and_a_replica_closes_it(
    make_gateway, redis_stores, cli
):
    """Only REDIS_URL set where the admin runs: no adapter to edit the question with. The result
    says why, and the running replica that takes the decline closes the question's message."""
    store = redis_stores()
    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy", chat="ops")
    await gateway.drain()
    request_id = chat.last_request().request.request_id

    code, result = await cli(store.prefix, "pending", "--cancel", request_id, "--yes")
    assert code == 0 and result["cancelled"] is True and result["message_closed"] is False
    assert result["message_note"] == (
        "test is not configured here: the replica that runs the agent's next turn closes it"
    )
    await gateway.drain(inbound_ids=[f"answer:{request_id}"])
    assert [c.answered_line for c in chat.closed()] == ["✖ Cancelled by an operator"]
    assert chat.closed()[0].view.request.request_id == request_id
    assert runner.calls[-1].response.response_kind == "declined"
    assert chat.texts()[-1] == "got: declined"


async def test_an_operator_cancel_the_graph_refuses_tells_the_chat_the_task_stopped(
    make_gateway, redis_stores, cli
):
    """A graph's own ``interrupt()`` whose schema refuses the declined answer: the chat is told
    the task stopped, as after the person's own Cancel."""

    def refusing(turn):
        if turn.response is None:
            return asking(choice_request("Book the trip?", ["Yes"], "interrupt:int-1"))
        return TurnOutput(dismissed=True)

    store = redis_stores()
    gateway, chat = await make_gateway(store, ScriptedRunner(refusing))
    await chat.say("book a trip", chat="ops")
    await gateway.drain()
    request_id = chat.last_request().request.request_id

    code, result = await cli(store.prefix, "pending", "--cancel", request_id, "--yes")
    assert code == 0 and result["cancelled"] is True
    await gateway.drain(inbound_ids=[f"answer:{request_id}"])
    assert [c.answered_line for c in chat.closed()] == ["✖ Cancelled by an operator"]
    assert chat.texts() == [
        "The task this question was part of has stopped: it cannot go on without an answer."
        " Send a new message to start again."
    ]


async def test_reset_thread_starts_the_chat_over(make_gateway, redis_stores, cli):
    store = redis_stores()
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)
    await chat.say("hello", chat="c9")
    await gateway.drain()
    code, text = await cli(store.prefix, "reset-thread", "test:w1:c9:-", as_json=False)
    assert code == 1 and "--yes" in text  # not confirmed: nothing changed
    code, reset = await cli(store.prefix, "reset-thread", "test:w1:c9:-", "--yes")
    assert reset["old_thread_id"] == runner.calls[0].thread_id != reset["thread_id"]
    await chat.say("again", chat="c9")
    await gateway.drain()
    assert runner.calls[-1].thread_id == reset["thread_id"]


async def test_backlog_redrive_drop_and_consumers(make_gateway, redis_stores, cli):
    store = redis_stores()
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner, start=False)
    await chat.say("first", chat="a")
    await chat.say("second", chat="b")
    code, backlog = await cli(store.prefix, "backlog")
    assert (backlog["length"], backlog["waiting"], backlog["pending"]) == (2, 2, 0)
    assert backlog["oldest_entry"] and backlog["oldest_age_seconds"] < 60

    jobs = await store.read_jobs("dead-replica", count=2, block_ms=0)  # read, then its reader died
    code, backlog = await cli(store.prefix, "backlog")
    assert backlog["pending_per_consumer"] == {"dead-replica": 2} and backlog["waiting"] == 0
    assert {h["inbound_id"] for h in backlog["held"]} == {j.inbound_id for j in jobs}
    code, text = await cli(store.prefix, "consumers", "--remove", "dead-replica", as_json=False)
    assert code == 1 and "holds 2 job(s)" in text

    first, second = sorted(jobs, key=lambda j: j.entry_id)
    assert (await cli(store.prefix, "backlog", "--drop", second.entry_id, "--yes"))[1]["dropped"] is True
    assert (await cli(store.prefix, "backlog", "--redrive", first.entry_id))[1]["redriven"] is True

    gateway.config.stale_claim_seconds = 1000.0  # only a re-driven job looks stale this soon
    gateway.pool.stale_after = 1000.0
    await gateway.start()
    await gateway.drain(inbound_ids=[first.inbound_id], timeout=20)
    assert [c.text for c in runner.calls] == ["first"]  # the dropped job never ran
    assert (await cli(store.prefix, "backlog"))[1]["length"] == 0

    consumers = {c["name"]: c for c in (await cli(store.prefix, "consumers"))[1]}
    assert consumers["dead-replica"]["pending"] == 0
    assert (await cli(store.prefix, "consumers", "--remove", "dead-replica"))[1] == {
        "removed": "dead-replica"
    }
    assert "dead-replica" not in {c["name"] for c in (await cli(store.prefix, "consumers"))[1]}


async def test_the_admin_needs_redis(cli, monkeypatch):
    monkeypatch.delenv("REDIS_URL")
    code, text = await cli("any", "threads", as_json=False)
    assert code == 1 and "REDIS_URL is not set" in text


async def test_admin_error_on_unknown_ids(redis_stores):
    store = redis_stores()
    async with Admin(GatewayConfig(redis_url=REDIS_URL, bot_id=store.prefix)) as admin:
        with pytest.raises(AdminError, match="no job"):
            await admin.drop("1-1")
        with pytest.raises(AdminError, match="no chat thread"):
            await chat_key(admin, "test:w1:none:-")


async def test_long_idle_consumers_with_nothing_held_are_pruned(redis_stores):
    store = redis_stores()
    await store.accept_job(
        dedupe_key="test:p1", kind="message", inbound_id="test:p1", order_key="o", payload="{}", seen_ttl=60
    )
    await store.read_jobs("holds-one", count=1, block_ms=0)
    async with Admin(GatewayConfig(redis_url=REDIS_URL, bot_id=store.prefix)) as admin:
        await admin.redis.xgroup_createconsumer(admin.keys.jobs, "workers", "holds-none")  # read nothing
        assert await admin.prune_consumers(idle_seconds=3600) == []  # nobody idle an hour yet
        await asyncio.sleep(0.05)  # idle some milliseconds (the store's script counts whole ones)
        assert await admin.prune_consumers(idle_seconds=0.01) == ["holds-none"]
        assert [c["name"] for c in await admin.consumers()] == ["holds-one"]


@pytest.mark.parametrize("args", [["consumers"], ["consumers", "--prune"], ["consumers", "--remove", "vm-1"]])
async def test_consumers_with_redis_down_say_so_as_every_admin_command_does(
    cli, monkeypatch, unused_tcp_port, args
):
    """Nothing listens at REDIS_URL: not "(none)", `[]` or "no consumer", but `admin threads`'
    line and exit code (3, Redis unreachable)."""
    monkeypatch.setenv("REDIS_URL", f"redis://:pw-of-nothing@127.0.0.1:{unused_tcp_port}/0")
    threads = await cli("any", "threads", as_json=False)
    assert (
        threads[0] == 3 and f"not reachable: 127.0.0.1:{unused_tcp_port} refused the connection" in threads[1]
    )

    code, text = await cli("any", *args, as_json=False)

    assert (code, text) == threads
    assert "no consumer" not in text and "(none)" not in text and "pw-of-nothing" not in text


async def test_consumers_with_a_refused_password_say_so(cli, monkeypatch, redis_stores):
    monkeypatch.setenv("REDIS_URL", REDIS_URL.replace("redis://", "redis://nobody-user:wrong-pw@"))
    code, text = await cli(redis_stores().prefix, "consumers", as_json=False)
    assert code == 4 and "invalid username-password pair" in text and "in REDIS_URL" in text
    assert "(none)" not in text and "wrong-pw" not in text


async def test_consumers_of_a_bot_that_never_queued_a_job_are_none(cli, redis_stores):
    bot_id = redis_stores().prefix
    assert await cli(bot_id, "consumers") == (0, [])  # no stream yet
    async with Admin(GatewayConfig(redis_url=REDIS_URL, bot_id=bot_id)) as admin:
        await admin.redis.xadd(admin.keys.jobs, {"inbound_id": "test:c1"})
    assert await cli(bot_id, "consumers") == (0, [])  # a stream, no group yet
    assert (await cli(bot_id, "backlog"))[1]["pending"] == 0
    code, text = await cli(bot_id, "consumers", "--remove", "vm-1", as_json=False)
    assert code == 1 and f"no consumer 'vm-1' under bot id {bot_id!r}" in text


@pytest.mark.parametrize("flag", ["--drop", "--redrive"])
async def test_a_job_named_by_its_inbound_id_is_not_found_and_stays(cli, redis_stores, flag):
    """`admin backlog` shows a held job's entry id and its inbound id side by side: the inbound id
    given instead (Redis: "Invalid stream ID") is "no job", exit 1, not exit 3 "Redis unreachable"."""
    store = redis_stores()
    await store.accept_job(
        dedupe_key="slack:Ev08ABCDEF",
        kind="message",
        inbound_id="slack:Ev08ABCDEF",
        order_key="o",
        payload="{}",
        seen_ttl=60,
    )
    await store.read_jobs("dead-replica", count=1, block_ms=0)
    (held,) = (await cli(store.prefix, "backlog"))[1]["held"]
    assert held["inbound_id"] == "slack:Ev08ABCDEF"

    for mistyped in ("slack:Ev08ABCDEF", held["entry_id"].partition("-")[0], "99999999999999999999999-0"):
        code, text = await cli(store.prefix, "backlog", flag, mistyped, "--yes", as_json=False)
        assert code == 1, text
        assert f"no job {mistyped!r} in the stream under bot id {store.prefix!r}" in text
        assert "entry ids look like 1796000000000-0" in text

    code, backlog = await cli(store.prefix, "backlog")  # still there, still held by the dead replica
    assert backlog["length"] == 1
    assert [(h["entry_id"], h["consumer"]) for h in backlog["held"]] == [(held["entry_id"], "dead-replica")]


@pytest.mark.parametrize(
    "args", [["pending", "--cancel", "req-0123"], ["reset-thread", "slack:T1:C1:-", "--yes"]]
)
async def test_not_found_names_the_bot_id_it_looked_under(cli, redis_stores, args):
    """On a laptop without the bot's CLARIGATE_BOT_ID (or --config) the admin reads bot id
    'clarigate', where nothing is: "not found" says where it looked, as `identity --forget` does."""
    bot_id = redis_stores().prefix
    code, text = await cli(bot_id, *args, as_json=False)
    assert code == 1 and f"under bot id {bot_id!r}" in text
