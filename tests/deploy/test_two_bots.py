"""Two bots (two bot ids) on one Redis never see each other's threads, dedupe keys or clarifications."""

from __future__ import annotations

import os
import uuid

from redis.asyncio import Redis

from clarigate.adapters.testing import ScriptedRunner, TestAdapter, Turn, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import AcceptOutcome, AnswerStatus
from clarigate.gateway.runtime.app import build_gateway
from clarigate.gateway.runtime.config import GatewayConfig

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
QUESTION = choice_request("Which team?", ["red", "blue"])


def asks_first(turn: Turn) -> TurnOutput:
    if turn.response is None and turn.text == "assign":
        return asking(QUESTION)
    return TurnOutput(replies=[f"{turn.text}"])


async def start_bot(bot_id: str, runner: ScriptedRunner):
    """A bot built from config the way ``clarigate serve`` builds it (its platform plugged in)."""
    config = GatewayConfig(
        bot_id=bot_id,
        redis_url=REDIS_URL,
        extra_adapters=["clarigate.adapters.testing:TestAdapter"],
        workers=2,
    )
    gateway = build_gateway(config, runner=runner)
    adapter = gateway.adapters[0]
    assert isinstance(adapter, TestAdapter)
    await gateway.start()
    return gateway, adapter


async def test_two_bots_on_one_redis_are_isolated():
    ids = [f"test-bot-{name}-{uuid.uuid4().hex[:8]}" for name in ("a", "b")]
    runners = [ScriptedRunner(asks_first), ScriptedRunner(asks_first)]
    (bot_a, chat_a), (bot_b, chat_b) = [await start_bot(i, r) for i, r in zip(ids, runners, strict=True)]
    try:
        # the same platform delivery (same event id) reaches both bots: each handles its own
        assert await chat_a.say("assign", event_id="shared-1") is AcceptOutcome.ACCEPTED
        assert await chat_b.say("hello", event_id="shared-1") is AcceptOutcome.ACCEPTED
        await bot_a.drain()
        await bot_b.drain()

        # threads: the same chat thread maps to a different agent thread in each bot
        assert runners[0].calls[0].thread_id != runners[1].calls[0].thread_id
        assert [c.text for c in runners[0].calls] == ["assign"] and [c.text for c in runners[1].calls] == [
            "hello"
        ]
        fresh_chat = chat_a.conversation("only-a")
        await chat_a.say("x", chat="only-a")
        await bot_a.drain()
        assert await bot_a.knows_conversation(fresh_chat) and not await bot_b.knows_conversation(fresh_chat)

        # clarifications: bot B knows nothing of bot A's question, its token or its answer
        token = chat_a.last_request().token
        assert await bot_a.pending_by_token(token) is not None
        assert await bot_b.pending_by_token(token) is None
        chat_b.sent.extend(chat_a.sent)  # someone replays bot A's button against bot B
        assert (await chat_b.click(0)).status is AnswerStatus.EXPIRED
        await chat_b.reply("blue")  # in bot B, the same chat has nothing pending: an ordinary message
        await bot_b.drain()
        assert runners[1].calls[-1].response is None
        assert (await chat_a.click(1)).status is AnswerStatus.ACCEPTED
        await bot_a.drain()
        assert runners[0].calls[-1].response.value == "blue"

        # every key each bot wrote is under its own prefix
        keys = await keys_under(ids)
        assert keys[ids[0]] and keys[ids[1]]
        assert not any(ids[1] in key for key in keys[ids[0]])
        assert not any(ids[0] in key for key in keys[ids[1]])
    finally:
        for gateway in (bot_a, bot_b):
            await gateway.stop(grace=0)
            await gateway.store.close()
        await delete_keys(ids)


async def keys_under(prefixes: list[str]) -> dict[str, list[str]]:
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        return {p: [k async for k in client.scan_iter(match=f"{p}:*", count=500)] for p in prefixes}
    finally:
        await client.aclose()


async def delete_keys(prefixes: list[str]) -> None:
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    try:
        for prefix in prefixes:
            keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
            if keys:
                await client.delete(*keys)
    finally:
        await client.aclose()
