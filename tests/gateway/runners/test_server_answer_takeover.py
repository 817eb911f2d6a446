"""A job taken over on the LangGraph server path after its run had finished (the replica that ran
it died before sending the reply): the replica that takes it over joins that run, found on the
server by the job's inbound id, and reads its output; no step runs again, nothing is asked again."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langgraph_sdk import get_client

from clarigate.agent.protocol import answer_message_text, answer_with_option
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.server import server_thread_id

from ..langgraph_server.process import LangGraphServer
from .test_server_runner import runner_for


async def _taken_over(server: LangGraphServer, graph: str, job: RunInput) -> Any:
    """``job`` run again by another replica (a runner of its own, which remembers nothing)."""
    replica = runner_for(server, graph)
    try:
        return await replica.run_turn(job)
    finally:
        await replica.aclose()


async def _thread(server: LangGraphServer, thread_id: str) -> tuple[list[Any], list[Any]]:
    """The server thread's messages and runs."""
    client = get_client(url=server.url)
    sid = server_thread_id(thread_id)
    state = await client.threads.get_state(sid)
    return list(state["values"].get("messages", [])), await client.runs.list(sid, limit=100)


@pytest.mark.parametrize(
    ("graph", "say", "option", "reply", "ran"),
    [
        ("interrupter", "deploy it", 1, "Deploying to us-east.", 0),  # an own graph's interrupt
        ("approver", "clean up the test data", 0, "Done: ", 1),  # an approval: the tool runs once
    ],
)
async def test_an_answer_whose_run_ended_before_its_reply_was_sent_is_read_not_run_again(
    langgraph_server, graph, say, option, reply, ran
):
    thread_id, chat = uuid.uuid4().hex, {"platform": "test", "chat_id": f"takeover-{graph}"}
    first = runner_for(langgraph_server, graph)
    try:
        asked = await first.run_turn(RunInput(thread_id, say, metadata={**chat, "inbound_id": "test:m1"}))
        assert asked.request is not None
        answer = answer_with_option(asked.request, asked.request.options[option].id, None)
        job = RunInput(
            thread_id,
            answer_message_text(asked.request, answer),
            response=answer,
            metadata={**chat, "inbound_id": "test:a1"},
        )
        tools = len(langgraph_server.tool_calls())
        done = await first.run_turn(job)  # the run ends; the replica dies before sending its reply
    finally:
        await first.aclose()
    assert done.request is None and done.replies and done.replies[-1].startswith(reply)
    messages, runs = await _thread(langgraph_server, thread_id)

    out = await _taken_over(langgraph_server, graph, job)

    assert out.request is None and out.replies == done.replies  # the same reply, not the question
    assert out.run_id == done.run_id
    assert len(langgraph_server.tool_calls()) == tools + ran  # the tool did not run again
    now, runs_now = await _thread(langgraph_server, thread_id)
    assert [m["id"] for m in now] == [m["id"] for m in messages]  # no step wrote anything again
    assert len(runs_now) == len(runs) == 2  # one run for the message, one for the answer


async def test_a_message_whose_run_ended_before_its_reply_was_sent_is_read_not_run_again(langgraph_server):
    thread_id = uuid.uuid4().hex
    job = RunInput(
        thread_id, "deploy it", metadata={"platform": "test", "chat_id": "c", "inbound_id": "test:m1"}
    )
    first = runner_for(langgraph_server, "interrupter")
    try:
        asked = await first.run_turn(job)
    finally:
        await first.aclose()
    messages, _ = await _thread(langgraph_server, thread_id)

    out = await _taken_over(langgraph_server, "interrupter", job)

    assert out.request == asked.request and out.run_id == asked.run_id  # the same question, asked once
    now, runs = await _thread(langgraph_server, thread_id)
    assert [m["id"] for m in now] == [m["id"] for m in messages] and len(runs) == 1
