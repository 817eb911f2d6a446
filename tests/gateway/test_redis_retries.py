"""A command that ran but whose reply was lost is re-sent by the client: nothing lost or doubled.

A proxy between the gateway and Redis cuts the connection right after Redis ran a command, before
its reply reaches the gateway (a network blip). The store's link sends it again on a new
connection; the second run sees the first one's effect. The accept and a click's dedupe marker recognize their
own earlier write (accepted, not "duplicate"); the claim says "already answered by" the clicker
(acceptable: the message shows the answer). Each message is answered once, each answer run once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest

from agent.harness import TurnOutput
from gateway.messages import AcceptOutcome, AnswerStatus
from gateway.testing import ScriptedRunner, asking, choice_request


class ReplyDroppingProxy:
    """TCP proxy to Redis; when armed, the reply to the next call of one script is dropped with the link."""

    def __init__(self, upstream_port: int = 6379) -> None:
        self.upstream_port = upstream_port
        self.armed: bytes = b""  # the SHA of the script whose next reply is lost
        self.dropped = 0
        self.port = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        """Listen on a free port of 127.0.0.1."""
        self._server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def close(self) -> None:
        """Stop listening and cut the links still open."""
        if self._server is not None:
            self._server.close()
        for task in list(self._links):
            task.cancel()
        await asyncio.gather(*self._links, return_exceptions=True)

    async def _link(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        server_r, server_w = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        last_request = [b""]

        async def upstream() -> None:
            while data := await client_r.read(65536):
                last_request[0] = data
                server_w.write(data)
                await server_w.drain()

        async def downstream() -> None:
            while data := await server_r.read(65536):
                ran = self.armed and self.armed in last_request[0] and not data.startswith(b"-NOSCRIPT")
                if ran:
                    self.armed = b""
                    self.dropped += 1
                    return  # Redis ran it; the gateway never hears back
                client_w.write(data)
                await client_w.drain()

        tasks = [asyncio.create_task(upstream()), asyncio.create_task(downstream())]
        self._links.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in tasks:
                task.cancel()
                self._links.discard(task)
        for writer in (client_w, server_w):
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


@pytest.fixture
async def proxy() -> AsyncIterator[ReplyDroppingProxy]:
    """A proxy to the test Redis on 127.0.0.1:6379."""
    proxy = ReplyDroppingProxy()
    await proxy.start()
    yield proxy
    await proxy.close()


def proxied_store(redis_stores, proxy: ReplyDroppingProxy):
    return redis_stores(url=f"redis://127.0.0.1:{proxy.port}/0")  # same Redis, through the proxy


async def test_an_accept_whose_reply_was_lost_is_answered_once(proxy, redis_stores, make_gateway):
    runner = ScriptedRunner()
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner, start=False)
    await store.ping()

    proxy.armed = store._accept.sha.encode()
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

    proxy.armed = store._claim.sha.encode()
    outcome = await chat.click(1)
    assert proxy.dropped == 1
    await gateway.drain(inbound_ids=[f"answer:{question.request_id}"])

    # the retry saw the first run's claim: the clicker hears "already answered by" themselves
    assert outcome.status is AnswerStatus.ALREADY_ANSWERED and outcome.view.answered_by.user_id == "u1"
    assert [c.response.value for c in runner.calls if c.response] == ["us"]
    assert chat.texts() == ["going"]


async def test_a_click_whose_dedupe_reply_was_lost_still_counts(proxy, redis_stores, make_gateway):
    question = choice_request("Which region?", ["eu", "us"])
    runner = ScriptedRunner(
        lambda turn: asking(question) if turn.response is None else TurnOutput(replies=["going"])
    )
    store = proxied_store(redis_stores, proxy)
    gateway, chat = await make_gateway(store, runner)
    await chat.say("deploy")
    await gateway.drain()

    proxy.armed = b"interaction:"  # the click's "seen" marker is set, its reply lost, the SET re-sent
    outcome = await chat.click(0)
    assert proxy.dropped == 1
    await gateway.drain()

    assert outcome.status is AnswerStatus.ACCEPTED  # not dropped as a duplicate of itself
    assert chat.texts() == ["going"]
