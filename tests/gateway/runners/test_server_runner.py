"""The LangGraph server runner against a real server (``langgraph dev``) serving graphs built on
clarigate's harness with the scripted model: questions, approvals, interrupts, restarts, outages."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client

from clarigate.adapters.testing import TestAdapter
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.cli.doctor import run_checks
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.server import LangGraphServerRunner, server_thread_id
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.log_capture import captured_logs

from ..langgraph_server.process import LangGraphServer, free_port


def runner_for(server: LangGraphServer, graph: str) -> LangGraphServerRunner:
    """A runner on ``server``'s graph ``graph`` for the bot ``bot-1``."""
    return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id=graph), bot_id="bot-1")


async def test_a_question_asked_on_the_server_is_answered_by_a_click(langgraph_server, make_gateway):
    runner = runner_for(langgraph_server, "asker")
    gateway, chat = await make_gateway(MemoryStore("lg-ask"), runner)

    await chat.say("set up storage")
    await gateway.drain(timeout=30)
    question = chat.last_request()
    assert question.request.question == "Which database should I use?"
    assert [o.label for o in question.request.options] == ["PostgreSQL", "SQLite"]

    outcome = await chat.click(0)
    assert outcome.status is AnswerStatus.ACCEPTED
    await gateway.drain(timeout=30)
    assert "PostgreSQL" in chat.texts()[-1] and chat.texts()[-1].startswith("Going with")

    # the server's own APIs find the conversation by its metadata
    thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
    thread = await get_client(url=langgraph_server.url).threads.get(server_thread_id(thread_id))
    assert thread["metadata"]["platform"] == "test"
    assert thread["metadata"]["chat_id"] == "c1"
    assert thread["metadata"]["bot_id"] == "bot-1"
    await runner.aclose()


@pytest.mark.parametrize(("choice", "ran"), [("Approve", 1), ("Reject", 0)])
async def test_an_approval_interrupt_runs_the_tool_once_or_never(langgraph_server, make_gateway, choice, ran):
    runner = runner_for(langgraph_server, "approver")
    gateway, chat = await make_gateway(MemoryStore(f"lg-approve-{choice}"), runner)
    before = len(langgraph_server.tool_calls())

    await chat.say("clean up the test data", chat=f"approve-{choice}")
    await gateway.drain(timeout=30)
    request = chat.last_request().request
    assert request.clarification_type == "risk_confirmation"
    assert "delete_data" in request.question and "test-data" in (request.context or "")
    assert len(langgraph_server.tool_calls()) == before  # nothing ran before the decision

    labels = [o.label for o in request.options]
    await chat.click(labels.index(choice))
    await gateway.drain(timeout=30)
    assert len(langgraph_server.tool_calls()) == before + ran
    if ran:
        assert chat.texts()[-1].startswith("Done")
    await runner.aclose()


async def test_a_plain_interrupt_in_the_protocol_shape_is_a_native_question(langgraph_server, make_gateway):
    runner = runner_for(langgraph_server, "interrupter")
    gateway, chat = await make_gateway(MemoryStore("lg-interrupt"), runner)

    await chat.say("deploy it")
    await gateway.drain(timeout=30)
    request = chat.last_request().request
    assert request.question == "Which region should I deploy to?"
    await chat.click(1)
    await gateway.drain(timeout=30)
    assert chat.texts()[-1] == "Deploying to us-east."
    await runner.aclose()


async def test_the_thread_continues_after_a_gateway_restart_and_new_starts_another(
    langgraph_server, make_gateway, redis_stores
):
    store = redis_stores()
    first = runner_for(langgraph_server, "asker")
    gateway, chat = await make_gateway(store, first)
    await chat.say("set up storage")
    await gateway.drain(timeout=30)
    token = chat.last_request().token
    await gateway.stop(grace=1)
    await first.aclose()

    # a new process: new store connection, new runner, same Redis and the same server
    second = runner_for(langgraph_server, "asker")
    gateway2, chat2 = await make_gateway(redis_stores(store.prefix), second)
    chat2._questions[token] = chat.last_request()
    outcome = await chat2.click(1, user="u1", token=token)
    assert outcome.status is AnswerStatus.ACCEPTED
    await gateway2.drain(timeout=30)
    assert chat2.texts()[-1].startswith("Going with") and "SQLite" in chat2.texts()[-1]

    old = await gateway2.store.thread_for_chat(chat2.conversation().thread_key, 3600)
    await chat2.say("/new")
    await chat2.say("set up storage again")
    await gateway2.drain(timeout=30)
    new = await gateway2.store.thread_for_chat(chat2.conversation().thread_key, 3600)
    assert new != old
    client = get_client(url=langgraph_server.url)
    assert (await client.threads.get(server_thread_id(new)))["metadata"]["bot_id"] == "bot-1"
    assert chat2.last_request().request.question == "Which database should I use?"  # a fresh script
    await second.aclose()


async def test_a_job_delivered_again_joins_the_run_it_started(langgraph_server):
    runner = runner_for(langgraph_server, "asker")
    meta = {"inbound_id": "test:redelivered-1", "platform": "test", "chat_id": "c9"}
    run = RunInput("a1b2c3d4e5f60718293a4b5c6d7e8f90", "set up storage", metadata=meta)
    first = await runner.run_turn(run)
    again = await runner.run_turn(run)
    assert first.request is not None and again.request == first.request
    runs = await get_client(url=langgraph_server.url).runs.list(
        server_thread_id("a1b2c3d4e5f60718293a4b5c6d7e8f90")
    )
    assert len(runs) == 1  # one run for the inbound message, however often it is delivered
    await runner.aclose()


async def test_the_server_down_keeps_the_message_which_runs_once_when_it_is_back(
    tmp_path: Path, make_gateway
):
    server = LangGraphServer(tmp_path)
    runner = runner_for(server, "asker")
    gateway, chat = await make_gateway(MemoryStore("lg-down"), runner)
    assert not await runner.ping()  # /readyz says not ready

    await chat.say("set up storage")  # acknowledged while the server is down
    for _ in range(300):  # the SDK's own connection retries take a few seconds
        if chat.texts():
            break
        await asyncio.sleep(0.1)
    assert "unreachable" in chat.texts()[0]  # the person is told
    with pytest.raises(TimeoutError):
        await gateway.drain(timeout=1)  # and the message is kept
    server.start()
    try:
        await gateway.drain(timeout=60)
        assert chat.last_request().request.question == "Which database should I use?"
        assert len([t for t in chat.texts() if "unreachable" in t]) == 1
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        runs = await get_client(url=server.url).runs.list(server_thread_id(thread_id))
        assert len(runs) == 1
        assert await runner.ping()
    finally:
        server.stop()
        await runner.aclose()


async def test_doctor_names_a_wrong_assistant_and_an_unreachable_server(langgraph_server):
    wrong = runner_for(langgraph_server, "no-such-graph")
    assert any("no-such-graph" in p for p in await wrong.check())
    await wrong.aclose()
    nowhere = LangGraphServerRunner(AgentOptions(server_url=f"http://127.0.0.1:{free_port()}"))
    problems = await nowhere.check()
    assert problems and "does not answer" in problems[0]
    await nowhere.aclose()
    assert await runner_for(langgraph_server, "asker").check() == []


async def test_doctor_and_readyz_check_the_server(langgraph_server, monkeypatch, make_gateway):
    monkeypatch.setenv("LANGGRAPH_URL", langgraph_server.url)
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "asker")
    report = await run_checks(None)
    assert f"agent: LangGraph server at {langgraph_server.url}, assistant 'asker'" in report.ok
    monkeypatch.setenv("CLARIGATE_AGENT__ASSISTANT_ID", "nope")
    report = await run_checks(None)
    assert any("has no assistant or graph 'nope'" in p for p in report.problems)

    where = f"http://127.0.0.1:{free_port()}"
    nowhere = LangGraphServerRunner(AgentOptions(server_url=where))
    gateway, _ = await make_gateway(MemoryStore("lg-ready"), nowhere)
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=build_app(gateway)), base_url="http://gw")
    with captured_logs([], level=logging.INFO) as logged:
        answers = [await client.get("/readyz") for _ in range(3)]
    for response in answers:  # the server is named, with where it was looked for
        assert response.status_code == 503
        assert response.json()["failed"] == {"agent_server": f"unreachable ({where})"}
    # one line for the change, not one (and a traceback) per probe
    (line,) = logged.lines()
    said = f"WARNING clarigate.gateway.web.server: not ready: agent_server unreachable ({where})"
    assert line.endswith(said)
    await client.aclose()
    await nowhere.aclose()


async def test_a_server_restarted_mid_run_is_followed_again_and_answers_once(tmp_path: Path, make_gateway):
    server = LangGraphServer(tmp_path)
    server.start()
    runner = runner_for(server, "sleeper")
    client = get_client(url=server.url, api_key=None)
    try:
        gateway, chat = await make_gateway(MemoryStore("lg-mid-run"), runner)
        await chat.say("take a nap")
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        for _ in range(200):  # until the run is under way on the server
            try:
                if await client.runs.list(server_thread_id(thread_id), status="running"):
                    break
            except Exception:  # noqa: BLE001 - the thread may not exist yet
                pass
            await asyncio.sleep(0.05)
        server.stop()  # in the middle of the run
        server.start()
        await gateway.drain(timeout=120)
        assert [t for t in chat.texts() if "unreachable" not in t] == ["Rested."]  # answered once
        runs = await client.runs.list(server_thread_id(thread_id))
        assert len(runs) == 1  # joined again, not started again
    finally:
        server.stop()
        await client.http.client.aclose()
        await runner.aclose()


async def test_a_server_run_streams_its_tool_step_and_answer_into_one_live_message(
    langgraph_server, make_gateway
):
    runner = runner_for(langgraph_server, "writer")

    class Live(TestAdapter):
        def __init__(self, gateway):  # type: ignore[no-untyped-def]
            super().__init__(gateway, live=True, live_interval=0.1)

    gateway, chat = await make_gateway(
        MemoryStore("lg-writer"), runner, adapter_class=Live, progress_after_seconds=5.0
    )
    await chat.say("rolling upgrades")
    await gateway.drain(timeout=30)
    views = [view for _, view in chat.shown]
    answer = "The guide says to run the migration first, then restart every worker in turn."
    # the tool's step from the server's updates, then the answer from its message tokens, growing
    # (the server's tools are its own: the gateway knows their names, not their descriptions)
    assert "🔧 Using search_docs…" in [view.status for view in views]
    texts = [view.text for view in views if view.text]
    assert len(texts) >= 2 and all(b.startswith(a) for a, b in zip(texts, texts[1:], strict=False))
    assert answer.startswith(texts[-1])
    [reply] = [item for _, item in chat.sent]
    assert isinstance(reply, TextReply) and reply.text == answer and reply.live is not None
    await runner.aclose()


async def test_a_server_that_does_not_answer_does_not_hold_the_start(monkeypatch) -> None:
    """A server that takes the connection and never answers: the start goes on (runs wait for
    it), saying so once, instead of waiting for the SDK's retries."""
    from clarigate.gateway.runners import server as server_module

    held: list[asyncio.StreamWriter] = []

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)  # read nothing, answer nothing

    tcp = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = tcp.sockets[0].getsockname()[1]
    monkeypatch.setattr(server_module, "START_CHECK_SECONDS", 0.5)
    runner = LangGraphServerRunner(AgentOptions(server_url=f"http://127.0.0.1:{port}"))
    try:
        with captured_logs([], level=logging.WARNING) as logged:
            await runner.start()
        (line,) = logged.lines()
        assert f"the LangGraph server at http://127.0.0.1:{port}" in line
        assert "does not answer yet" in line and "messages wait until it answers" in line
        assert held, "the start asked the server"
    finally:
        await runner.aclose()
        for writer in held:
            writer.close()
        tcp.close()


async def test_what_a_question_cannot_hold_is_shown_in_full_above_it_on_the_server(
    langgraph_server, make_gateway
):
    """A graph's ``interrupt()`` with a plan of several lines (longer than a question's 200
    characters) asks its last line, the whole plan shown right above it, as in process."""
    runner = runner_for(langgraph_server, "plan")
    gateway, chat = await make_gateway(MemoryStore("lg-plan"), runner)

    await chat.say("migrate the shards", chat="plan")
    await gateway.drain(timeout=30)
    request = chat.last_request().request
    assert request.question == "Shall I start now, or wait for the weekend?"
    shown = chat.texts()[-1]  # the reply right before the question
    assert all(f"Step {i}: migrate shard {i} to the new cluster." in shown for i in range(1, 9))
    await runner.aclose()
