"""On a LangGraph server (``langgraph dev``), through the gateway: clarigate's agent whose model
answers with nothing, twice, reads as in process (``model_answer_empty``, one WARNING line), not as
a failed run with its traceback."""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import catalog
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Stop
from tests.log_capture import captured_logs

from .test_server_runner import runner_for


async def test_an_answer_empty_twice_on_a_server_is_said_not_done(
    langgraph_server: Any, make_gateway: Any
) -> None:
    stub = langgraph_server.stub
    stub.received.clear()
    stub.replies[:] = [Stop("stop", ""), Stop("stop", "")]
    runner = runner_for(langgraph_server, "stub_agent")
    gateway, chat = await make_gateway(MemoryStore("lg-empty-answer"), runner)
    try:
        with captured_logs([]) as logs:
            await chat.say("summarise the report", chat="empty-answer")
            await gateway.drain(timeout=30)
        assert chat.texts() == [catalog.text("model_answer_empty", "en")]
        assert len(stub.received) == 2  # asked once more, on the server as in process
        lines = logs.lines()
        assert [line for line in lines if " WARNING " in line and "empty, twice" in line], lines
        assert not [line for line in lines if " ERROR " in line or "Traceback" in line], lines
    finally:
        await runner.aclose()
