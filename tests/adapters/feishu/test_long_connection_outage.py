"""Redis (the store) unreachable while Feishu pushes over the long connection: the ws client
answers the frame with code 500, so Feishu pushes the event again; one warning line, no traceback
and no line per frame; once Redis is back the event pushed again runs once and is answered once.

lark-oapi's real ws client handles each data frame (``Client._handle_message``, what it calls for
every message off the websocket) with the handler the adapter registers; what it writes back is
kept instead of being sent. The store is a real Redis reached through a proxy that is cut and
brought back. A group mention met while the bot's identity is not known yet is answered 500 the
same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import lark_oapi as lark
import pytest
from lark_oapi.ws.pb.pbbp2_pb2 import Frame

from clarigate.adapters.feishu import FeishuAdapter, startup
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import outage
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig

from ...conftest import RedisStoreFactory
from ...gateway.tcp_proxy import OutageProxy
from .cards import text_of
from .conftest import feishu_settings
from .events import message_event


class WsClient:
    """lark-oapi's ws client with the adapter's handler; ``push`` hands it one data frame as
    Feishu sends it and returns the code of the answer the client wrote back."""

    def __init__(self, handler: lark.EventDispatcherHandler) -> None:
        quiet = lark.LogLevel.WARNING
        self.client = lark.ws.Client("cli_test", "secret", event_handler=handler, log_level=quiet)
        self.written: list[bytes] = []

        async def write(message: bytes) -> None:
            self.written.append(message)

        self.client._write_message = write  # type: ignore[method-assign]

    async def push(self, event: dict[str, Any], frame_id: str) -> int:
        frame = Frame(SeqID=1, LogID=1, service=1, method=1)  # method 1: a data frame
        headers = {"type": "event", "message_id": frame_id, "sum": "1", "seq": "0", "trace_id": "t"}
        for key, value in headers.items():
            header = frame.headers.add()
            header.key, header.value = key, value
        frame.payload = json.dumps(event).encode()
        # the ws client runs its own loop in its own thread, and the handler blocks it
        await asyncio.to_thread(asyncio.run, self.client._handle_message(frame.SerializeToString()))
        answer = Frame()
        answer.ParseFromString(self.written[-1])
        return int(json.loads(answer.payload)["code"])


async def given_up(adapter: FeishuAdapter) -> None:
    """Wait until the adapter's own ws client has given up on the fake (it has no websocket): the
    frames are handed to a client of the test's own."""
    thread = adapter.long_connection._thread if adapter.long_connection else None
    async with asyncio.timeout(10):
        while thread is not None and thread.is_alive():  # noqa: ASYNC110 (a thread, not a task)
            await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def long_connection_of(fake_api: Any, gateway: Gateway) -> AsyncIterator[WsClient]:
    """The gateway started with a Feishu adapter on the long connection, and a ws client of the
    test's own handing frames to its handler (stopped after)."""
    adapter = FeishuAdapter(feishu_settings(fake_api, mode="long_connection"), gateway)
    gateway.register(adapter)
    await gateway.start()
    try:
        assert adapter.long_connection is not None
        await adapter.startup.wait()
        await given_up(adapter)
        yield WsClient(adapter.long_connection.dispatcher())
    finally:
        await gateway.stop(grace=0)


def lines(caplog: pytest.LogCaptureFixture, level: int) -> Iterator[logging.LogRecord]:
    """What the long connection and the SDK logged at ``level`` or above (the core's loops, and
    the name lookups the fake refuses, say their own)."""
    names = ("clarigate.adapters.feishu.long_connection", "Lark")
    return (r for r in caplog.records if r.name.startswith(names) and r.levelno >= level)


async def test_an_event_met_by_a_redis_outage_is_answered_500_and_runs_once_when_pushed_again(
    fake_api, redis_stores: RedisStoreFactory, redis_proxy: OutageProxy, caplog: pytest.LogCaptureFixture
):
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    gateway = Gateway(GatewayConfig(workers=1, streaming="off", progress_after_seconds=60.0), store, runner)
    async with long_connection_of(fake_api, gateway) as ws:
        event = message_event("hello", event_id="ev-ws-outage")
        await redis_proxy.cut()
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            # Feishu's push and its push again while Redis is down
            codes = [await ws.push(event, "f1"), await ws.push(event, "f2")]
        assert codes == [500, 500]  # Feishu pushes the event again
        [warning] = list(lines(caplog, logging.WARNING))
        assert warning.levelno == logging.WARNING and warning.exc_info is None
        assert "answered 500 for Feishu to push again until it is back" in warning.getMessage()
        assert not any(r.exc_info for r in lines(caplog, logging.DEBUG))  # no traceback
        assert runner.calls == []

        await redis_proxy.restore()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            codes = [await ws.push(event, "f3"), await ws.push(event, "f4")]
            await gateway.drain(timeout=10)
        assert codes == [200, 200]
        assert [r.getMessage() for r in lines(caplog, logging.INFO)] == [
            "the store answers again: Feishu events are taken as usual"
        ]
        assert [c.text for c in runner.calls] == ["hello"]  # once, though pushed four times
        replies = [text_of(card) for card in fake_api.shown()]
        assert [r for r in replies if "You said: hello" in r] == replies and len(replies) == 1


async def test_a_bug_in_a_long_connection_handler_still_logs_its_traceback(
    fake_api, redis_stores: RedisStoreFactory, caplog: pytest.LogCaptureFixture, monkeypatch
):
    gateway = Gateway(GatewayConfig(workers=1), redis_stores(), ScriptedRunner())

    async def broken(message: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(gateway, "accept", broken)
    async with long_connection_of(fake_api, gateway) as ws:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            assert await ws.push(message_event("hello"), "f1") == 500
        ours = [r for r in lines(caplog, logging.ERROR) if r.name.startswith("clarigate")]
        assert len(ours) == 1 and ours[0].exc_info is not None


def from_a_bot(event_id: str) -> dict[str, Any]:
    """A message a bot sent (the bot's own, echoed): handled as usual without asking the store."""
    event = message_event("beep", event_id=event_id)
    event["event"]["sender"]["sender_type"] = "app"
    return event


async def test_the_outage_is_over_only_once_the_store_answers_a_ping(
    fake_api,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
):
    """A frame handled as usual proves nothing about the store when it never reached it: the line
    that says the store is back waits for a ``PING`` it answers."""
    monkeypatch.setattr(outage, "PROBE_SECONDS", 0.0)  # every frame handled as usual may ask
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    gateway = Gateway(GatewayConfig(workers=1, streaming="off"), store, ScriptedRunner())
    async with long_connection_of(fake_api, gateway) as ws:
        await redis_proxy.cut()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            assert await ws.push(message_event("hello", event_id="ev-ws-ping"), "f1") == 500
            # Redis still down: a bot's message is answered as usual, and the outage goes on
            assert await ws.push(from_a_bot("ev-ws-bot-1"), "f2") == 200
            assert [r.levelno for r in lines(caplog, logging.INFO)] == [logging.WARNING]
            await redis_proxy.restore()
            assert await ws.push(from_a_bot("ev-ws-bot-2"), "f3") == 200
        assert [r.getMessage() for r in lines(caplog, logging.INFO)][1:] == [
            "the store answers again: Feishu events are taken as usual"
        ]


async def test_a_group_mention_while_the_bots_identity_is_unknown_is_answered_500_and_taken_when_pushed_again(
    fake_api, redis_stores: RedisStoreFactory, caplog: pytest.LogCaptureFixture, monkeypatch
):
    """Feishu's open API down at the first start (no identity kept): which mention is the bot's
    cannot be told, so "@bot deploy it" in a group is answered 500 (Feishu pushes it again, to any
    of the app's connections), said once at WARNING with no line of the SDK's per frame; pushed
    again once Feishu told the identity, it runs once."""
    monkeypatch.setattr(startup, "IDENTITY_RETRIES", RetryPolicy(first=0.1, cap=0.4))
    fake_api.fail_next(500, 1, times=10_000, path_part="/bot/v3/info")
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    gateway = Gateway(
        GatewayConfig(workers=1, streaming="off", progress_after_seconds=60.0), redis_stores(), runner
    )
    async with long_connection_of(fake_api, gateway) as ws:
        event = message_event("deploy it", chat="oc_team", chat_type="group", mention_bot=True)
        caplog.clear()
        with caplog.at_level(logging.DEBUG):
            codes = [await ws.push(event, "f1"), await ws.push(event, "f2")]
        assert codes == [500, 500]
        said = [r for r in caplog.records if r.name in ("Lark", "clarigate.adapters.feishu.receive")]
        assert [r.levelno for r in said if r.levelno >= logging.INFO] == [logging.WARNING], said
        assert not any(r.exc_info for r in caplog.records)
        assert runner.calls == []

        fake_api.failures.clear()  # Feishu tells the identity (asked again in the background)
        receiver = gateway.adapters[0].receiver  # type: ignore[attr-defined]
        async with asyncio.timeout(5):
            while receiver.bot_open_id is None:  # noqa: ASYNC110 (set by the start's own task)
                await asyncio.sleep(0.05)
        assert [await ws.push(event, "f3"), await ws.push(event, "f4")] == [200, 200]
        await gateway.drain(timeout=10)
    assert [c.text for c in runner.calls] == ["deploy it"]
    assert [text_of(card) for card in fake_api.shown()] == ["You said: deploy it"]
