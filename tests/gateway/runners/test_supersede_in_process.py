"""Through the gateway, in process: a typed message over an open approval of an operator's own
``create_agent`` + HITL graph closes the question as superseded (the core) and the runner rejects
the approval before the message runs, so the refusing OpenAI stub never sees an open call."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs
from tests.agent.openai_stub import Call, Stub, serving


async def test_a_typed_message_over_an_approval_is_a_rejection_then_runs(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    user_graphs.RAN.clear()
    with serving(Stub(), monkeypatch) as stub:
        stub.replies = [
            [Call("delete_records", {"table": "users", "limit": 5}, id="call_delete")],
            "Not deleting.",
            "There are 42 users.",
        ]
        settings = AgentSettings(
            checkpointer_url="memory://", graph="tests.agent.user_graphs:make_hitl_agent"
        )
        runner = LangGraphRunner(settings)
        try:
            gateway, chat = await make_gateway(MemoryStore("supersede-in-process"), runner)
            await chat.say("clean up the users table")
            await gateway.drain()
            assert chat.last_request().request.clarification_type == "risk_confirmation"

            await chat.reply("how many users are there?")
            await gateway.drain()

            assert chat.closed()  # the core closed the approval as superseded
            assert chat.texts()[-1] == "There are 42 users." and "Not deleting." not in chat.texts()
            assert stub.refused == [] and user_graphs.RAN == []
            (rejection,) = [m for m in stub.received[-1]["messages"] if m["role"] == "tool"]
            assert catalog.text("approval_superseded") in rejection["content"]
        finally:
            await runner.aclose()
