"""An MCP tool that returns an image, with an OpenAI model: OpenAI's Chat Completions API takes
images from the user only ("Image URLs are only allowed for messages with role 'user', but this
message with role 'tool' contains an image URL"), and the local stub refuses them as it does. The
thread must not break for good: the model sees the image in a user message after the results."""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from tests.agent.conftest import scripted
from tests.agent.openai_stub import Call, Stub, serving

SERVER = str(Path(__file__).with_name("mcp_picture_server.py"))
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
IMAGE_URL = "data:image/png;base64," + base64.b64encode(PNG).decode()


def _pictures() -> dict[str, Any]:
    return {"p": {"transport": "stdio", "command": sys.executable, "args": [SERVER]}}


def _texts(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    return [content] if isinstance(content, str) else [p["text"] for p in content if p["type"] == "text"]


def _image_urls(message: dict[str, Any]) -> list[str]:
    content = message["content"]
    parts = content if isinstance(content, list) else []
    return [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]


async def _two_turns(stub: Stub, monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], ClarifyingAgent]:
    settings = AgentSettings(
        model="openai:gpt-4.1-mini", checkpointer_url="memory://", mcp_servers=_pictures()
    )
    outcomes: list[str] = []
    with serving(stub, monkeypatch):
        agent = await ClarifyingAgent.create(settings)
        try:
            for text in ("show me the pictures", "hello?"):
                try:
                    outcomes.append(" ".join((await agent.run_turn("t", text)).replies))
                except Exception as exc:  # what the gateway turns into "Sorry, something went wrong"
                    outcomes.append(type(exc).__name__)
        finally:
            await agent.aclose()
    return outcomes, agent


async def test_an_mcp_image_result_does_not_break_the_thread_for_good(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stub = Stub(replies=[[Call("picture", {}), Call("captioned", {})], "Seen.", "Hello again."])
    outcomes, agent = await _two_turns(stub, monkeypatch)
    assert outcomes == ["Seen.", "Hello again."], (outcomes, stub.refused[-1:])
    assert not stub.refused
    for body in stub.received[1:]:  # every later call: the results, then the images from the "user"
        roles = [m["role"] for m in body["messages"]]
        step = roles.index("tool")
        assert roles[step : step + 3] == ["tool", "tool", "user"], roles
        picture, captioned, images = body["messages"][step : step + 3]
        assert _texts(picture) == ["(image or file returned: see the next message)"]
        assert _texts(captioned) == ["a red dot", "(image or file returned: see the next message)"]
        assert _image_urls(images) == [IMAGE_URL, IMAGE_URL]
        assert _texts(images)[1:] == ["picture:", "captioned:"]
    last = stub.received[-1]["messages"]
    assert [m["role"] for m in last][-2:] == ["assistant", "user"] and _texts(last[-1]) == ["hello?"]
    # the thread itself keeps what the tool returned
    state = await agent._graph.aget_state({"configurable": {"thread_id": "t"}})
    kept = [m for m in state.values["messages"] if isinstance(m, ToolMessage) and m.name == "picture"]
    assert [b.get("type") for b in kept[0].content] == ["image"]


async def test_a_link_to_a_file_reaches_an_openai_model_as_text_and_the_thread_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """OpenAI's Chat Completions takes no file by its URL (langchain-openai: "OpenAI Chat
    Completions does not support file URLs."), in no message: the model reads the link instead."""
    stub = Stub(replies=[[Call("report", {})], "Here is the report.", "Hello again."])
    outcomes, _ = await _two_turns(stub, monkeypatch)
    assert outcomes == ["Here is the report.", "Hello again."], (outcomes, stub.refused[-1:])
    for body in stub.received[1:]:
        roles = [m["role"] for m in body["messages"]]
        step = roles.index("tool")
        assert roles[step + 1 :] in (["assistant", "user"], []), roles  # no user message with a file
        link = "(returned, but not shown to you: file:///srv/reports/q3.pdf (application/pdf))"
        assert _texts(body["messages"][step]) == ["report ready", link]


async def test_a_model_with_no_provider_gets_the_image_in_the_result() -> None:
    """In-process models (and Anthropic, which takes images in a tool result) get it as it came."""
    model = scripted({"tool_calls": [{"name": "picture", "args": {}}]}, {"content": "Seen."})
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers=_pictures())
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        assert (await agent.run_turn("t", "show me the picture")).replies == ["Seen."]
    finally:
        await agent.aclose()
    sent = model.calls[-1]
    result = next(m for m in sent if isinstance(m, ToolMessage))
    assert [b.get("type") for b in result.content] == ["image"]
    assert result is sent[-1]


async def test_bytes_of_no_stated_type_reach_an_openai_model_as_a_note_naming_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An embedded blob without ``mimeType`` (the spec makes it optional): no model reads bytes
    of no known type, and LangChain refuses to make a block of them ("mime_type is required when
    using base64 data"); the model reads what came back and where, and the thread goes on."""
    stub = Stub(replies=[[Call("dump", {})], "The dump is at file:///srv/dumps/core.1.", "Hello again."])
    outcomes, _ = await _two_turns(stub, monkeypatch)
    assert outcomes == ["The dump is at file:///srv/dumps/core.1.", "Hello again."], (
        outcomes,
        stub.refused[-1:],
    )
    note = "(returned, but not shown to you: file:///srv/dumps/core.1 (application/octet-stream))"
    for body in stub.received[1:]:
        roles = [m["role"] for m in body["messages"]]
        step = roles.index("tool")
        assert roles[step + 1 :] in (["assistant", "user"], []), roles
        assert _texts(body["messages"][step]) == ["dump ready", note]


async def test_bytes_of_no_stated_type_reach_any_model_as_the_note_in_the_thread_language() -> None:
    model = scripted({"tool_calls": [{"name": "dump", "args": {}}]}, {"content": "好的。"})
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers=_pictures())
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        assert (await agent.run_turn("t", "请把转储文件给我")).replies == ["好的。"]
    finally:
        await agent.aclose()
    result = next(m for m in model.calls[-1] if isinstance(m, ToolMessage))
    assert result.status == "success"
    assert [b["text"] for b in result.content] == [
        "dump ready",
        "（已返回，但无法向你展示：file:///srv/dumps/core.1 (application/octet-stream)）",
    ]
