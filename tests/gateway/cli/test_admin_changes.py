"""``clarigate admin`` changes that lose work: each names what it changes and asks first (or
``--yes``); ``reset-thread`` takes a chat as ``admin threads --chat`` finds it and closes its
question as ``/new`` does."""

from __future__ import annotations

import io
import json
import os
from datetime import UTC, datetime

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.cli.admin_chats import reset_thread
from clarigate.gateway.cli.admin_store import Admin
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.identity import identity_key

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


def script(turn):
    if turn.response is None:
        return asking(choice_request(f"Which region for {turn.text}?", ["eu", "us"]))
    return TurnOutput(replies=[f"got: {turn.response.response_kind}"])


async def asked_in(store, chats, make_gateway):
    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    for name in chats:
        await chat.say(f"deploy {name}", chat=name)
    await gateway.drain()
    return gateway, chat, runner


async def test_reset_thread_takes_a_chat_id_and_closes_its_question_for_good(make_gateway, redis_stores, cli):
    store = redis_stores()
    gateway, chat, runner = await asked_in(store, ["D123", "D1234"], make_gateway)
    (asked,) = [r.request for r in chat.requests() if "D123?" in r.request.question]
    (old_thread,) = [c.thread_id for c in runner.calls if c.text == "deploy D123"]
    assert len((await cli(store.prefix, "threads", "--chat", "D123"))[1]) == 2  # D1234 holds it too

    code, reset = await cli(store.prefix, "reset-thread", "D123", "--yes")

    assert code == 0, reset
    assert reset["chat"] == "test:w1:D123:-"  # the key it matched, said
    assert reset["old_thread_id"] == old_thread != reset["thread_id"]
    assert reset["closed"] == [asked.request_id]
    assert reset["message_note"].startswith("test is not configured here")
    pending = (await cli(store.prefix, "pending"))[1]
    assert [p["chat"] for p in pending] == ["test:w1:D1234:-"]  # the other chat's stays open
    code, text = await cli(store.prefix, "pending", "--cancel", asked.request_id, "--yes", as_json=False)
    assert code == 1 and "no open clarification" in text
    calls = len(runner.calls)
    await gateway.drain()
    assert len(runner.calls) == calls and chat.texts("D123") == []  # nothing ran on the old thread
    await chat.say("again", chat="D123")
    await gateway.drain()
    assert runner.calls[-1].thread_id == reset["thread_id"]


async def test_a_chat_id_of_several_chats_lists_them_and_changes_none(make_gateway, redis_stores, cli):
    store = redis_stores()
    await asked_in(store, ["D123", "D1234"], make_gateway)
    before = (await cli(store.prefix, "threads"))[1]

    code, text = await cli(store.prefix, "reset-thread", "D12", "--yes", as_json=False)

    assert code == 1
    assert "'D12' names 2 chat threads, so none was changed" in text
    assert "test:w1:D123:-" in text and "test:w1:D1234:-" in text
    assert (await cli(store.prefix, "threads"))[1] == before
    assert len((await cli(store.prefix, "pending"))[1]) == 2


async def test_a_reset_edits_the_question_closed_where_the_platform_is_reachable(make_gateway, redis_stores):
    store = redis_stores()
    gateway, chat, _ = await asked_in(store, ["ops"], make_gateway)
    async with Admin(GatewayConfig(redis_url=REDIS_URL, bot_id=store.prefix)) as admin:
        # the gateway the CLI builds holds the configured platforms' adapters; here, the test's
        result = await reset_thread(admin, "test:w1:ops:-", gateway.control)
    assert result["closed"] == [chat.last_request().request.request_id] and "message_note" not in result
    (closed,) = chat.closed()
    assert closed.view.request.request_id == chat.last_request().request.request_id
    assert "operator" in closed.answered_line


class Terminal(io.StringIO):
    """A stdin that is a terminal, holding what the operator types."""

    def isatty(self) -> bool:
        return True


async def test_cancel_asks_on_a_terminal_and_refuses_without_yes_elsewhere(
    make_gateway, redis_stores, cli, monkeypatch
):
    store = redis_stores()
    _, chat, _ = await asked_in(store, ["ops"], make_gateway)
    request_id = chat.last_request().request.request_id

    code, text = await cli(store.prefix, "pending", "--cancel", request_id, as_json=False)  # no tty
    assert code == 1 and "add --yes to confirm" in text
    monkeypatch.setattr("sys.stdin", Terminal("no\n"))
    code, text = await cli(store.prefix, "pending", "--cancel", request_id, as_json=False)
    assert code == 1
    assert f"cancel clarification {request_id} ('Which region for deploy ops?', chat test:w1:ops:-)" in text
    assert len((await cli(store.prefix, "pending"))[1]) == 1  # still open
    monkeypatch.setattr("sys.stdin", Terminal("yes\n"))
    code, text = await cli(store.prefix, "pending", "--cancel", request_id, as_json=False)
    assert code == 0 and "cancelled: True" in text
    assert (await cli(store.prefix, "pending"))[1] == []


async def test_forgetting_an_identity_asks_and_identities_say_when_in_utc(redis_stores, cli):
    bot_id = redis_stores().prefix
    since = 1796587666
    client = Redis.from_url(REDIS_URL)
    try:
        await client.hset(identity_key(bot_id), "telegram", json.dumps({"who": "bot 42", "since": since}))
        code, rows = await cli(bot_id, "identity")
        assert rows == [
            {
                "platform": "telegram",
                "who": "bot 42",
                "since": since,
                "since_utc": datetime.fromtimestamp(since, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        ]
        assert "2026-12-06T20:07:46Z" in (await cli(bot_id, "identity", as_json=False))[1]
        code, text = await cli(bot_id, "identity", "--forget", "telegram", as_json=False)
        assert code == 1 and "forget that bot id" in text and "telegram bot 42" in text
        assert "add --yes to confirm" in text
        assert await client.hexists(identity_key(bot_id), "telegram")  # not forgotten
        assert await cli(bot_id, "identity", "--forget", "telegram", "--yes") == (
            0,
            {"forgotten": "telegram"},
        )
        assert not await client.hexists(identity_key(bot_id), "telegram")
    finally:
        await client.delete(identity_key(bot_id))
        await client.aclose()
