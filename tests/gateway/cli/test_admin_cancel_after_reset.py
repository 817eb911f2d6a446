"""``clarigate admin pending --cancel`` of a question its chat has left since it was asked: closed,
nothing run or said on the thread the chat left, and the command's output says so."""

from __future__ import annotations

import asyncio
import os

from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.cli.admin_store import Admin
from clarigate.gateway.runtime.config import GatewayConfig

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")


async def asked_after_a_reset(make_gateway, store, cli):
    """A question asked by a run that was going when the operator started its chat over
    (``admin reset-thread``): open, on the agent thread the chat has left."""
    started, release = asyncio.Event(), asyncio.Event()

    async def script(turn):
        if turn.response is None:
            started.set()
            await release.wait()
            return asking(choice_request("Which region?", ["eu", "us"]))
        return TurnOutput(replies=[f"got: {turn.response.response_kind}"])

    runner = ScriptedRunner(script)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy", chat="ops")
    await started.wait()
    code, reset = await cli(store.prefix, "reset-thread", "ops", "--yes")
    assert code == 0 and reset["closed"] == []  # nothing open yet
    release.set()
    await gateway.drain()
    code, (left,) = await cli(store.prefix, "pending")
    assert left["thread_id"] == reset["old_thread_id"] != reset["thread_id"]
    return gateway, chat, runner, {**left, "new_thread_id": reset["thread_id"]}


async def next_runs(gateway, chat, runner, calls):
    """The runs after a later message to the chat (run in its turn, after anything queued before it)."""
    await chat.say("deploy again", chat="ops")
    await gateway.drain()
    return runner.calls[calls:]


async def test_cancel_of_a_question_on_a_thread_since_reset_closes_it_and_runs_nothing(
    make_gateway, redis_stores, cli
):
    store = redis_stores()
    gateway, chat, runner, left = await asked_after_a_reset(make_gateway, store, cli)
    calls, said = len(runner.calls), chat.texts("ops")

    code, result = await cli(store.prefix, "pending", "--cancel", left["request_id"], "--yes")

    assert code == 0 and result["cancelled"] is True
    assert (await cli(store.prefix, "pending"))[1] == []
    assert (await chat.click(0)).message == "an operator cancelled this question."
    # the old thread was not resumed, nor the person told of an answer they never gave
    assert [c.thread_id for c in await next_runs(gateway, chat, runner, calls)] == [left["new_thread_id"]]
    assert chat.texts("ops") == said
    # the operator is told why
    assert result["agent_note"] == (
        "chat test:w1:ops:- was started over since this question was asked: closed without "
        "telling the agent (nothing runs on the thread the chat left)"
    )
    assert result["message_note"] == (
        "test is not configured here: the question's message is left as it is (a click on it is refused)"
    )


async def test_cancel_of_a_question_on_a_thread_since_reset_closes_its_message_where_it_can(
    make_gateway, redis_stores, cli
):
    store = redis_stores()
    gateway, chat, runner, left = await asked_after_a_reset(make_gateway, store, cli)
    calls = len(runner.calls)
    async with Admin(GatewayConfig(redis_url=REDIS_URL, bot_id=store.prefix)) as admin:
        result = await admin.cancel(left["request_id"], {"test": chat})  # as the CLI does with the adapter
    assert result["message_closed"] is True and "agent_note" in result and "message_note" not in result
    assert [c.answered_line for c in chat.closed()] == ["✖ Cancelled by an operator"]
    assert [c.thread_id for c in await next_runs(gateway, chat, runner, calls)] == [left["new_thread_id"]]
