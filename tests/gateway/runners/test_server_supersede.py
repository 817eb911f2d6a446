"""On a LangGraph server (``langgraph dev``), through the gateway: a new message over an open
approval of an operator's own ``create_agent`` + HITL graph rejects it first, so the provider (the
refusing OpenAI stub) never sees an unanswered tool call; a plain interrupt() gets the
"superseded" value."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Call

from .test_server_runner import runner_for


@pytest.mark.parametrize(
    ("first", "second", "locale"),
    [
        ("clean up the test data", "actually, how big is the test data?", "en"),
        ("清理测试数据", "其实，测试数据有多大？", "zh"),
    ],
)
async def test_a_new_message_over_an_open_approval_rejects_it_on_the_server(
    langgraph_server: Any, make_gateway: Any, first: str, second: str, locale: str
) -> None:
    stub = langgraph_server.stub
    stub.received.clear()
    stub.refused.clear()
    stub.replies[:] = [
        [Call("delete_data", {"target": "test-data"}, id="call_delete")],
        "Not deleting.",  # the superseded run's answer: never shown
        "The test data is 3 GB.",
        "You are welcome.",
    ]
    runner = runner_for(langgraph_server, "hitl_user")
    gateway, chat = await make_gateway(MemoryStore(f"lg-supersede-{locale}"), runner)
    ran_before = len(langgraph_server.tool_calls())
    try:
        await chat.say(first, chat=f"supersede-{locale}")
        await gateway.drain(timeout=30)
        assert chat.last_request().request.clarification_type == "risk_confirmation"

        await chat.reply(second)
        await gateway.drain(timeout=30)

        assert stub.refused == []
        assert chat.texts()[-1] == "The test data is 3 GB."
        assert "Not deleting." not in chat.texts()
        assert chat.closed()  # the approval's message was closed as superseded
        assert len(langgraph_server.tool_calls()) == ran_before  # the tool never ran
        sent = stub.received[-1]["messages"]
        (rejection,) = [m for m in sent if m["role"] == "tool"]
        assert rejection["tool_call_id"] == "call_delete"
        assert catalog.text("approval_superseded", locale) in rejection["content"]  # type: ignore[arg-type]
        assert sent[-1] == {"role": "user", "content": second}

        await chat.reply("thanks")
        await gateway.drain(timeout=30)
        assert chat.texts()[-1] == "You are welcome." and stub.refused == []
    finally:
        await runner.aclose()


async def test_a_plain_interrupt_on_the_server_gets_the_superseded_value(
    langgraph_server: Any, make_gateway: Any
) -> None:
    from langgraph_sdk import get_client

    from clarigate.gateway.runners.server import server_thread_id

    runner = runner_for(langgraph_server, "answer_echo")
    gateway, chat = await make_gateway(MemoryStore("lg-supersede-plain"), runner)
    try:
        await chat.say("ship it", chat="supersede-plain")
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert asked.question == "Which release?"

        await chat.reply("what changed since v1?")
        await gateway.drain(timeout=30)

        thread_id = await gateway.store.thread_for_chat(chat.conversation("supersede-plain").thread_key, 3600)
        state = await get_client(url=langgraph_server.url).threads.get_state(server_thread_id(thread_id))
    finally:
        await runner.aclose()
    said = [m["content"] for m in state["values"]["messages"] if m["type"] == "ai"]
    resumed = json.loads(said[0].removeprefix("resumed with "))
    assert resumed["response_kind"] == "declined" and resumed["reason"] == "superseded"
    assert resumed["request_id"] == asked.request_id
    assert chat.last_request().request.question == "Which release?"  # the new message asked anew


async def test_a_message_run_again_after_its_superseding_run_was_made_runs_itself_once(
    langgraph_server: Any,
) -> None:
    """The gateway dies (or the server goes away) right after the run closing the open question
    was made: the job runs again, and the message runs, once, never mistaken for that run."""
    import httpx
    from langgraph_sdk import get_client

    from clarigate.gateway.runners.base import AgentUnavailable, RunInput
    from clarigate.gateway.runners.server import server_thread_id
    from clarigate.gateway.runners.server_supersede import SUPERSEDED_BY_KEY

    thread = "5e2c0d8a9b7f4e1aa3c6d0f1e2b3c4d5"
    first = runner_for(langgraph_server, "answer_echo")
    asked = await first.run_turn(RunInput(thread, "ship it", metadata={"inbound_id": "t:1"}))
    assert asked.request is not None and asked.request.question == "Which release?"
    create = first._client.runs.create

    async def made_then_gone(*args: Any, **kwargs: Any) -> Any:
        run = await create(*args, **kwargs)
        if SUPERSEDED_BY_KEY in (kwargs.get("metadata") or {}):
            raise httpx.ConnectError("the gateway was killed right after making the closing run")
        return run

    first._client.runs.create = made_then_gone  # type: ignore[method-assign]
    message = RunInput(thread, "what changed since v1?", metadata={"inbound_id": "t:2"})
    with pytest.raises(AgentUnavailable):
        await first.run_turn(message)
    await first.aclose()

    again = runner_for(langgraph_server, "answer_echo")  # the job delivered again, to a new gateway
    try:
        output = await again.run_turn(message)
    finally:
        await again.aclose()
    assert output.replies == [] and output.request is not None  # the message ran: it asks anew
    assert output.request.question == "Which release?"
    assert output.request.request_id != asked.request.request_id
    client = get_client(url=langgraph_server.url)
    state = await client.threads.get_state(server_thread_id(thread))
    runs = [r["metadata"] for r in await client.runs.list(server_thread_id(thread))]
    await client.http.client.aclose()
    closing = [m for m in runs if m.get(SUPERSEDED_BY_KEY) == "t:2"]
    assert len(closing) == 1 and "clarigate_inbound_id" not in closing[0]  # not one made again
    assert [m.get("clarigate_inbound_id") for m in runs].count("t:2") == 1
    said = [(m["type"], m["content"]) for m in state["values"]["messages"]]
    assert said[0] == ("human", "ship it") and said[2] == ("human", "what changed since v1?")
    assert said[1][0] == "ai" and len(said) == 3  # closed once, the message once
    assert json.loads(said[1][1].removeprefix("resumed with "))["reason"] == "superseded"
