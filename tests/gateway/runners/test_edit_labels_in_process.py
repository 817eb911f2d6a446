"""Through the gateway, in process: an operator's ``create_agent`` whose LangChain
``HumanInTheLoopMiddleware`` reviews two calls of one tool in one approval; Edit's form tells the
two calls' fields apart, and an edit of the second call edits that call only."""

from __future__ import annotations

from typing import Any

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import resume_graphs


async def test_the_edit_form_of_two_calls_of_one_tool_names_each_call(make_gateway: Any) -> None:
    resume_graphs.RAN.clear()
    settings = AgentSettings(
        checkpointer_url="memory://", graph="tests.agent.resume_graphs:make_same_tool_twice"
    )
    runner = LangGraphRunner(settings)
    try:
        gateway, chat = await make_gateway(MemoryStore("edit-labels"), runner)
        await chat.say("clean up")
        await gateway.drain()
        await chat.click(2)  # Edit
        await gateway.drain()
        form = chat.last_request().request
        labels = {f.label: f.name for f in form.fields}
        assert list(labels) == [
            "delete_rows #1 · table",
            "delete_rows #1 · limit",
            "delete_rows #2 · table",
            "delete_rows #2 · limit",
        ]
        await chat.submit({labels["delete_rows #2 · limit"]: "3"})
        await gateway.drain()
    finally:
        await runner.aclose()
    assert resume_graphs.RAN == ["delete_rows users 5", "delete_rows orders 3"]
