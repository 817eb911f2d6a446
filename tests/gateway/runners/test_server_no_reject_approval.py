"""On a LangGraph server (``langgraph dev``), through the gateway: an approval of an operator's own
``create_agent`` + HITL graph whose review allows approve and edit only is turned down like any
other. Its Cancel, and a new message over it, answer the call without a decision the middleware
would refuse: the tool never runs, the model (the refusing OpenAI stub: it refuses an unanswered
call) reads why, and the run goes on."""

from __future__ import annotations

from typing import Any

from clarigate.agent.protocol import catalog
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Call

from .test_server_runner import runner_for


def _results(sent: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """The tool results in what the model was sent: ``(call id, content)``."""
    return [(m["tool_call_id"], m["content"]) for m in sent if m["role"] == "tool"]


async def test_a_cancel_answers_the_call_as_declined_and_the_run_goes_on(
    langgraph_server: Any, make_gateway: Any
) -> None:
    stub = langgraph_server.stub
    stub.received.clear()
    stub.refused.clear()
    stub.replies[:] = [
        [Call("delete_data", {"target": "test-data"}, id="call_cancelled")],
        "Not deleting it.",
    ]
    runner = runner_for(langgraph_server, "hitl_approve_or_edit")
    gateway, chat = await make_gateway(MemoryStore("lg-no-reject-cancel"), runner)
    ran_before = len(langgraph_server.tool_calls())
    try:
        await chat.say("clean up the test data", chat="no-reject-cancel")
        await gateway.drain(timeout=30)
        assert [o.label for o in chat.last_request().request.options] == ["Approve", "Edit"]
        assert chat.buttons()[-1] == "Cancel"

        outcome = await chat.cancel()
        await gateway.drain(timeout=30)
        assert outcome.status == AnswerStatus.ACCEPTED
        assert chat.texts()[-1] == "Not deleting it." and stub.refused == []
        assert len(langgraph_server.tool_calls()) == ran_before  # the tool never ran
        declined = catalog.text("approval_declined")
        assert _results(stub.received[-1]["messages"]) == [("call_cancelled", declined)]
    finally:
        await runner.aclose()


async def test_a_new_message_answers_the_call_as_superseded_and_runs(
    langgraph_server: Any, make_gateway: Any
) -> None:
    stub = langgraph_server.stub
    stub.received.clear()
    stub.refused.clear()
    stub.replies[:] = [
        [Call("delete_data", {"target": "test-data"}, id="call_superseded")],
        "Not deleting.",  # the superseded run's answer: never shown
        "The test data is 3 GB.",
    ]
    runner = runner_for(langgraph_server, "hitl_approve_or_edit")
    gateway, chat = await make_gateway(MemoryStore("lg-no-reject-new"), runner)
    ran_before = len(langgraph_server.tool_calls())
    try:
        await chat.say("clean up the test data", chat="no-reject-new")
        await gateway.drain(timeout=30)
        await chat.reply("actually, how big is the test data?")
        await gateway.drain(timeout=30)

        assert chat.closed() and stub.refused == []
        assert chat.texts()[-1] == "The test data is 3 GB." and "Not deleting." not in chat.texts()
        assert len(langgraph_server.tool_calls()) == ran_before  # the tool never ran
        sent = stub.received[-1]["messages"]
        assert _results(sent) == [("call_superseded", catalog.text("approval_superseded"))]
        assert sent[-1] == {"role": "user", "content": "actually, how big is the test data?"}
    finally:
        await runner.aclose()
