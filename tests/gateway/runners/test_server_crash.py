"""A LangGraph server killed mid-run (``kill -9`` of ``langgraph dev``) and started again after
5, 25 or 90 s: the message is answered exactly once, and the person is told once that it is kept
when the outage lasts.

``langgraph dev`` writes its threads and runs to its work directory every 10 s and its
checkpoints only when it stops cleanly, so a kill loses what came after the last write and every
thread's history: here the run (and its thread) are lost, and the
gateway starts the run again from the recorded input; a run written before the kill is retried
by the server itself, and the gateway joins it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from langgraph_sdk import get_client

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.server import LangGraphServerRunner, human_message_id, server_thread_id
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.process import LangGraphServer

KEPT = "Your message is kept"


async def _running(client, sid: str) -> None:  # type: ignore[no-untyped-def]
    for _ in range(600):  # until the run is under way on the server
        try:
            if await client.runs.list(sid, status="running"):
                return
        except Exception:  # noqa: BLE001 - the thread may not exist yet
            pass
        await asyncio.sleep(0.05)
    raise AssertionError("the run never started")


async def _crash_and_restart(tmp_path: Path, make_gateway, outage: float, *, written: bool) -> None:  # type: ignore[no-untyped-def]
    server = LangGraphServer(tmp_path)
    server.start()
    runner = LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id="sleeper"), bot_id="b")
    client = get_client(url=server.url, api_key=None)
    try:
        gateway, chat = await make_gateway(MemoryStore(f"lg-crash-{outage}"), runner)
        await chat.say("take a nap")
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        sid = server_thread_id(thread_id)
        await _running(client, sid)
        if written:  # the server writes what it holds every 10 s: the run is on disk when it dies
            await asyncio.sleep(11)
        server.kill()
        await asyncio.sleep(outage)
        server.start()
        await gateway.drain(timeout=240)
        replies = [t for t in chat.texts() if KEPT not in t]
        assert replies == ["Rested."]  # answered exactly once, no error
        told = [t for t in chat.texts() if KEPT in t]
        assert len(told) == 1  # told once that the message is kept
        state = await client.threads.get_state(sid)
        said = [m["content"] for m in state["values"]["messages"] if m["type"] == "ai"]
        assert said == ["Rested."]  # and the thread holds one answer
    finally:
        server.stop()
        await client.http.client.aclose()
        await runner.aclose()


@pytest.mark.parametrize("outage", [5.0, 25.0])
async def test_a_run_lost_in_a_server_crash_is_started_again_and_answered_once(
    tmp_path: Path, make_gateway, outage: float
):
    await _crash_and_restart(tmp_path, make_gateway, outage, written=False)


@pytest.mark.timeout(300)
async def test_a_run_the_server_wrote_before_it_crashed_is_joined_after_a_long_outage(
    tmp_path: Path, make_gateway, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.setenv("NAP_SECONDS", "20")  # still running when the server has written it
    await _crash_and_restart(tmp_path, make_gateway, 90.0, written=True)


async def lost_run_of(
    server: LangGraphServer,
    thread: str,
    inbound: str,
    graph: str = "two_steps",
    **stop: list[str],
) -> None:
    """What a lost run leaves behind: the turn's human message in the thread and the steps it
    ran, but no run carrying the inbound id (the server lost it)."""
    client = get_client(url=server.url, api_key=None)
    sid = server_thread_id(thread)
    await client.threads.create(thread_id=sid)
    human = {"type": "human", "id": human_message_id(inbound), "content": "clean up staging"}
    run = await client.runs.create(sid, graph, input={"messages": [human]}, **stop)  # type: ignore[arg-type]
    await client.runs.join(sid, run["run_id"])
    await client.http.client.aclose()


async def _cut_off_run_of(server: LangGraphServer, thread: str, inbound: str) -> None:
    """What a run cut off after its first step leaves behind: the turn's human message and the
    step's reply in the thread, ``apply`` still to run, and no run the server knows of (state
    updates as the steps write the checkpoints the run would have)."""
    client = get_client(url=server.url, api_key=None)
    sid = server_thread_id(thread)
    await client.threads.create(thread_id=sid, graph_id="two_steps")
    human = {"type": "human", "id": human_message_id(inbound), "content": "clean up staging"}
    await client.threads.update_state(sid, {"messages": [human]}, as_node="__start__")
    plan = {"type": "ai", "content": "Plan: drop the staging tables."}
    await client.threads.update_state(sid, {"messages": [plan]}, as_node="plan")
    assert (await client.threads.get_state(sid))["next"] == ["apply"]
    await client.http.client.aclose()


@pytest.mark.parametrize("cut_off", [True, False])
async def test_a_lost_runs_turn_goes_on_from_its_checkpoint_or_is_read_from_the_thread(
    langgraph_server, cut_off
):
    thread, inbound = f"lost-{cut_off}", f"test:lost-{cut_off}"
    if cut_off:
        await _cut_off_run_of(langgraph_server, thread, inbound)
    else:
        await lost_run_of(langgraph_server, thread, inbound)
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="two_steps"))
    try:
        output = await runner.run_turn(RunInput(thread, "clean up staging", metadata={"inbound_id": inbound}))
    finally:
        await runner.aclose()
    plan, done = "Plan: drop the staging tables.", "Dropped the staging tables."
    assert output.replies == [plan, done]  # each step once: nothing ran twice
    client = get_client(url=langgraph_server.url, api_key=None)
    state = await client.threads.get_state(server_thread_id(thread))
    assert [m["content"] for m in state["values"]["messages"] if m["type"] == "ai"] == [plan, done]
    runs = await client.runs.list(server_thread_id(thread))
    assert len(runs) == 1  # the one going on from the checkpoint, or the lost one: none again
    await client.http.client.aclose()
