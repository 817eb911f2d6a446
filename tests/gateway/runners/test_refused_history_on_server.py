"""On a LangGraph server (``langgraph dev``), through the gateway: an operator's own
``create_agent`` graph whose tool raised leaves its thread with a tool call and no result, which
the provider refuses (400) on every later message. The person is told the conversation cannot go
on and to send /new, as in process, not that something went wrong on our side."""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import catalog
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Call
from tests.log_capture import captured_logs

from .test_server_runner import runner_for


async def test_a_history_the_provider_refuses_on_a_server_says_to_start_again(
    langgraph_server: Any, make_gateway: Any
) -> None:
    stub = langgraph_server.stub
    stub.received.clear()
    stub.refused.clear()
    stub.replies[:] = [[Call("fetch_invoice", {"number": "A-17"}, id="call_invoice")]]
    runner = runner_for(langgraph_server, "raising_tool_user")
    gateway, chat = await make_gateway(MemoryStore("lg-refused-history"), runner)
    try:
        await chat.say("show me invoice A-17", chat="refused-history")
        await gateway.drain(timeout=30)
        assert chat.texts() == [catalog.text("run_failed", "en")]  # the operator's tool raised
        with captured_logs([]) as logs:
            await chat.say("你还在吗？请回答我", chat="refused-history")
            await gateway.drain(timeout=30)
        assert stub.refused and "call_invoice" in stub.refused[-1]  # the provider did answer: a 400
        assert chat.texts()[-1] == catalog.text("model_history_refused", "zh")
        lines = [line for line in logs.lines() if "history refused by the provider" in line]
        assert len(lines) == 1 and " ERROR " in lines[0], logs.lines()
        assert "sk-test-not-a-key" not in logs.text() and "Traceback" not in logs.text()
    finally:
        await runner.aclose()
