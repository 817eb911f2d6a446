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
