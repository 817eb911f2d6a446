"""On a LangGraph server (``langgraph dev``), through the gateway: a photo sent with a typed answer
to an interrupt reaches the agent as in process (``test_answer_attachments_reach``): an own graph's
thread holds it right before the resumed node's reply, the built-in agent's right after the
approved tool's result; a graph that cannot be given it says so, and its thread never holds it."""

from __future__ import annotations

import base64
from typing import Any

from langgraph_sdk import get_client

from clarigate.gateway.runners.server import server_thread_id
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Call

from .test_answer_attachments_reach import NOT_PASSED, PNG, SHOT
from .test_server_runner import runner_for


def _images(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return [b["image_url"]["url"] for b in blocks if isinstance(b, dict) and b.get("type") == "image_url"]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(b.get("text", "") for b in content or [] if isinstance(b, dict))


async def _messages(server: Any, gateway: Any, chat: Any) -> list[dict[str, Any]]:
    thread = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
    state = await get_client(url=server.url).threads.get_state(server_thread_id(thread))
    return list(state["values"]["messages"])


async def _run(server: Any, make_gateway: Any, graph: str, steps: list[tuple[str, bool]]) -> tuple[Any, Any]:
    runner = runner_for(server, graph)
    gateway, chat = await make_gateway(MemoryStore(f"lg-answer-photo-{graph}"), runner)
    chat.files["f1"] = PNG
    try:
        for text, photo in steps:
            await chat.say(text, attachments=[SHOT] if photo else [])
            await gateway.drain(timeout=30)
        return gateway, chat
    finally:
        await runner.aclose()


async def test_an_own_graph_resumed_with_a_photo_holds_it_before_its_reply(
    langgraph_server: Any, make_gateway: Any
) -> None:
    gateway, chat = await _run(
        langgraph_server, make_gateway, "environments", [("deploy", False), ("2", True)]
    )
    messages = await _messages(langgraph_server, gateway, chat)
    sent, reply = messages[-2:]
    assert (sent["type"], reply["type"]) == ("human", "ai")
    assert _images(sent) == [f"data:image/png;base64,{base64.b64encode(PNG).decode()}"]
    assert "(attached: shot.png" in _text(sent)
    assert _text(reply) == "Deploying to stage-2."
    assert chat.texts()[-1] == "Deploying to stage-2."
    assert NOT_PASSED not in chat.texts()


async def test_the_built_in_agent_holds_the_photo_after_the_approved_tools_result(
    langgraph_server: Any, make_gateway: Any
) -> None:
    steps = [("clean up users", False), ("Approve", True), ("confirm", False)]
    gateway, chat = await _run(langgraph_server, make_gateway, "approver", steps)
    messages = await _messages(langgraph_server, gateway, chat)
    # the tool's result right after its call, then the photo, then the model's reply to it
    assert [m["type"] for m in messages[-4:]] == ["ai", "tool", "human", "ai"]
    call, result, sent, reply = messages[-4:]
    assert result["tool_call_id"] == call["tool_calls"][0]["id"]
    assert len(_images(sent)) == 1 and "(attached: shot.png" in _text(sent)
    assert "(attached: shot.png" in _text(reply)  # the model read it ("Done: {last_user}")
    assert NOT_PASSED not in chat.texts()


async def test_a_graph_that_cannot_take_the_photo_says_so_on_the_server(
    langgraph_server: Any, make_gateway: Any
) -> None:
    stub = langgraph_server.stub
    stub.refused.clear()
    stub.replies[:] = [[Call("delete_data", {"target": "users"}, id="call_photo")], "Not deleting."]
    steps = [("clean up users", False), ("Reject", True)]
    gateway, chat = await _run(langgraph_server, make_gateway, "hitl_user", steps)
    messages = await _messages(langgraph_server, gateway, chat)
    assert stub.refused == []
    assert NOT_PASSED in chat.texts() and chat.texts()[-1] == "Not deleting."
    assert not any(_images(m) or "shot.png" in _text(m) for m in messages)
