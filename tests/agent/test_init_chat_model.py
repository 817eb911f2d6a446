"""``provider:model`` goes through ``init_chat_model``: checked against a local OpenAI-compatible stub."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import answer_message_text, answer_with_option

ASK_ARGS = {
    "question": "Which cloud?",
    "clarification_type": "approach_choice",
    "options": ["AWS", "GCP"],
}


def _completion(message: dict[str, Any], finish: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4.1-mini",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class _StubOpenAI(BaseHTTPRequestHandler):
    """Asks a clarification first; once a tool result is in the history, replies with the last user text."""

    received: list[dict[str, Any]]
    first_calls: list[tuple[str, str, dict[str, Any]]] = [("call_stub1", "ask_clarification", ASK_ARGS)]

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append({"path": self.path, "body": body})
        if "response_format" in body:  # the clarify-first check (structured output)
            decision = {"need_clarification": False, "question": "", "verification": "Understood: tickets."}
            reply = _completion({"role": "assistant", "content": json.dumps(decision)}, "stop")
        elif any(m["role"] == "tool" for m in body["messages"]) or not self.first_calls:
            last_user = [m for m in body["messages"] if m["role"] == "user"][-1]["content"]
            reply = _completion({"role": "assistant", "content": f"Deploying. ({last_user})"}, "stop")
        else:
            calls = [
                {"id": id_, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
                for id_, name, args in self.first_calls
            ]
            reply = _completion({"role": "assistant", "content": None, "tool_calls": calls}, "tool_calls")
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def stub_openai(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, Any]]]:
    """A stub server on a free loopback port; yields the requests it received."""
    received: list[dict[str, Any]] = []
    handler = type("Handler", (_StubOpenAI,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    try:
        yield received
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_clarification_round_trip_through_an_openai_compatible_api(stub_openai: list[Any]) -> None:
    settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
    agent = await ClarifyingAgent.create(settings)
    try:
        asked = await agent.run_turn("t1", "deploy the service")

        first = stub_openai[0]
        assert first["path"].endswith("/chat/completions")
        assert first["body"]["model"] == "gpt-4.1-mini"
        tools = {t["function"]["name"]: t["function"] for t in first["body"]["tools"]}
        schema = tools["ask_clarification"]["parameters"]
        assert set(schema["properties"]) == {"question", "clarification_type", "context", "options", "fields"}
        assert set(schema["required"]) == {"question", "clarification_type"}
        assert "risk_confirmation" in json.dumps(schema["properties"]["clarification_type"])
        assert "multi_select" in json.dumps(schema)
        assert first["body"]["messages"][0]["role"] == "system"

        assert len(stub_openai) == 1
        assert asked.request is not None
        assert asked.request.tool_call_id == "call_stub1"
        assert [o.label for o in asked.request.options] == ["AWS", "GCP"]

        response = answer_with_option(asked.request, "option-2", None)
        text = answer_message_text(asked.request, response)
        done = await agent.run_turn("t1", text, response)

        assert done.replies == [f"Deploying. ({text})"]
        sent = stub_openai[1]["body"]["messages"]
        roles = [m["role"] for m in sent]
        assert roles == ["system", "user", "assistant", "tool", "user"]
        assert sent[2]["tool_calls"][0]["id"] == "call_stub1"
        assert sent[3]["tool_call_id"] == "call_stub1"
        assert sent[3]["content"] == asked.fallback_text
        assert sent[4]["content"] == text
    finally:
        await agent.aclose()


async def test_parallel_calls_from_a_real_client_are_answered_not_run(
    stub_openai: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The API asks and calls a tool in one message: the tool does not run, the next request is valid."""
    ran: list[str] = []

    @tool
    def deploy(target: str) -> str:
        """Deploy to ``target``."""
        ran.append(target)
        return "deployed"

    parallel = [("call_deploy", "deploy", {"target": "prod"}), ("call_ask", "ask_clarification", ASK_ARGS)]
    monkeypatch.setattr(_StubOpenAI, "first_calls", parallel)
    settings = AgentSettings(model="openai:gpt-4.1-mini", checkpointer_url="memory://")
    agent = await ClarifyingAgent.create(settings, tools=[deploy])
    try:
        asked = await agent.run_turn("t1", "deploy the service")
        assert asked.request is not None and asked.request.tool_call_id == "call_ask"
        assert await agent.pending_request("t1") == asked.request
        response = answer_with_option(asked.request, "option-1", None)
        await agent.run_turn("t1", answer_message_text(asked.request, response), response)
    finally:
        await agent.aclose()

    assert ran == []
    sent = stub_openai[1]["body"]["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "tool", "user"]
    assert [c["id"] for c in sent[2]["tool_calls"]] == ["call_deploy", "call_ask"]
    assert sorted(m["tool_call_id"] for m in sent[3:5]) == ["call_ask", "call_deploy"]


async def test_clarify_first_verification_is_not_left_as_a_prefill(
    stub_openai: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the check verifies, the agent's request still ends with the person's message."""
    monkeypatch.setattr(_StubOpenAI, "first_calls", [])
    settings = AgentSettings(
        model="openai:gpt-4.1-mini", checkpointer_url="memory://", allow_clarification=True
    )
    agent = await ClarifyingAgent.create(settings)
    try:
        out = await agent.run_turn("t1", "list the open tickets")
        await agent.run_turn("t1", "and the closed ones")
    finally:
        await agent.aclose()

    assert out.replies == ["Understood: tickets.", "Deploying. (list the open tickets)"]
    check, act = stub_openai[0]["body"], stub_openai[1]["body"]
    assert "response_format" in check and "response_format" not in act
    # Newer Anthropic models refuse a request that ends with the assistant's message.
    assert [m["role"] for m in act["messages"]] == ["system", "user"]
    assert len(stub_openai) == 3  # the second message is the same request: no second check
    later = stub_openai[2]["body"]["messages"]
    assert [m["role"] for m in later] == ["system", "user", "assistant", "assistant", "user"]
    assert "Understood: tickets." in [m["content"] for m in later if m["role"] == "assistant"]
