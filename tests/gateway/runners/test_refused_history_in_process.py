"""Through the gateway, in process: an operator's own ``create_agent`` graph (none of clarigate's
middleware) whose tool raised leaves its thread with a tool call and no result, which the provider
refuses (400) on every later message. The person is told the conversation cannot go on and to
send /new, not that the model cannot be reached; the log line says the provider refused the
history."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Call, Stub, serving
from tests.log_capture import captured_logs

TURN = "clarigate.gateway.flow.turn"


@pytest.mark.parametrize(
    ("first", "then", "locale"),
    [
        ("show me invoice A-17", "hello? are you there?", "en"),
        ("给我看发票 A-17", "你还在吗？请回答我", "zh"),
    ],
)
async def test_a_history_the_provider_refuses_says_to_start_again(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch, first: str, then: str, locale: Any
) -> None:
    stub = Stub(replies=[[Call("fetch_invoice", {"number": "A-17"}, id="call_invoice")]])
    settings = AgentSettings(
        checkpointer_url="memory://", graph="tests.agent.user_graphs:make_raising_tool_agent"
    )
    with serving(stub, monkeypatch):
        runner = LangGraphRunner(settings)
        try:
            gateway, chat = await make_gateway(MemoryStore(f"refused-history-{locale}"), runner)
            await chat.say(first)
            await gateway.drain(timeout=30)
            assert chat.texts() == [catalog.text("run_failed", locale)]  # the operator's tool raised
            with captured_logs([]) as logs:
                await chat.say(then)
                await gateway.drain(timeout=30)
        finally:
            await runner.aclose()
    assert stub.refused and "call_invoice" in stub.refused[-1]  # the provider did answer: a 400
    assert chat.texts()[-1] == catalog.text("model_history_refused", locale)
    assert "/new" in chat.texts()[-1] and chat.texts()[-1] != catalog.text("model_unusable", locale)
    (line,) = [line for line in logs.lines() if f" {TURN}: " in line and "failed" in line]
    assert f"ERROR {TURN}: model call failed" in line and "openai 400 invalid_request_error" in line
    assert "history refused by the provider" in line, line
    assert "Traceback" not in logs.text() and "sk-test-not-a-key" not in logs.text()
