"""A LangGraph server (``langgraph dev``) killed (``kill -9``) with a question open: it writes its
threads and runs every 10 s but its checkpoints only when it stops cleanly, so it comes back
without the thread's history. An answer given then, or whose resuming run the kill cut off, is
told that the server lost the conversation: it never starts a fresh thread holding only the
answer, nor ends in "something went wrong". A thread deleted on the server (its admin, a thread
TTL) reads the same, without claiming a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client

from clarigate.agent.protocol import catalog
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.server import server_thread_id
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.process import LangGraphServer
from .test_server_runner import runner_for

KEPT = "Your message is kept"
LOST = catalog.text("server_lost_thread", "en")


async def _written(server: LangGraphServer) -> None:
    """Until the server has just written its threads and runs to disk (it does every 10 s)."""
    ops = server.workdir / ".langgraph_api" / ".langgraph_ops.pckl"
    before = ops.stat().st_mtime_ns if ops.exists() else 0
    for _ in range(300):
        if ops.exists() and ops.stat().st_mtime_ns != before:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the server never wrote its threads")


async def _running(client: Any, sid: str) -> None:
    for _ in range(300):
        if await client.runs.list(sid, status="running"):
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the run never started")


@pytest.mark.parametrize("killed", ["question open", "answer running"])
async def test_an_answer_after_the_server_lost_its_thread_says_so(
    tmp_path: Path, make_gateway: Any, killed: str
) -> None:
    server = LangGraphServer(tmp_path)
    server.start()
    # ``approver``: its approval deletes data; ``ask_then_slow``: takes 5 s over the answer
    runner = runner_for(server, "approver" if killed == "question open" else "ask_then_slow")
    client = get_client(url=server.url, api_key=None)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"lg-lost-{killed}"), runner)
        await chat.say("clean up the old backups")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        sid = server_thread_id(await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600))
        await _written(server)  # the thread and the run that asked are on disk, its checkpoints not
        if killed == "question open":
            server.kill()
            server.start()
            assert (await chat.click(0)).status is AnswerStatus.ACCEPTED  # Approve
        else:
            assert (await chat.click(0)).status is AnswerStatus.ACCEPTED
            await _running(client, sid)
            server.kill()  # within 10 s of the last write: the resuming run is lost with the thread's history
            server.start()
        await gateway.drain(timeout=120)

        assert [t for t in chat.texts() if KEPT not in t] == [LOST]  # not "something went wrong"
        assert chat.last_request().request.request_id == asked.request_id  # nothing asked anew
        assert server.tool_calls() == []  # the approval's tool never ran
        state = await client.threads.get_state(sid)
        assert not (state["values"] or {}).get("messages")  # no fresh thread holding the answer
        assert (
            await runner.pending_request(
                await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
            )
            is None
        )
    finally:
        server.stop()
        await client.http.client.aclose()
        await runner.aclose()


async def test_an_answer_after_its_thread_was_deleted_on_the_server_does_not_claim_a_restart(
    langgraph_server: LangGraphServer, make_gateway: Any
) -> None:
    runner = runner_for(langgraph_server, "interrupter")
    client = get_client(url=langgraph_server.url, api_key=None)
    try:
        gateway, chat = await make_gateway(MemoryStore("lg-lost-deleted"), runner)
        await chat.say("deploy it")
        await gateway.drain(timeout=30)
        sid = server_thread_id(await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600))
        await client.threads.delete(sid)  # deleted on the server while the question is open

        assert (await chat.click(1)).status is AnswerStatus.ACCEPTED
        await gateway.drain(timeout=30)
        assert chat.texts() == [
            "The agent's server lost this conversation (it restarted without saving it, or the "
            "conversation was deleted there): please send your request again."
        ]
        await chat.say("deploy it")  # the request sent again is asked again
        await gateway.drain(timeout=30)
        await chat.click(1)
        await gateway.drain(timeout=30)
        assert chat.texts()[-1] == "Deploying to us-east."
    finally:
        await client.http.client.aclose()
        await runner.aclose()
