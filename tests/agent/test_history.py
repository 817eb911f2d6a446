"""A run that stopped mid-tool does not leave the thread unusable with a real provider."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool

from clarigate.agent.history import with_every_call_answered
from clarigate.agent.protocol import catalog

from .conftest import scripted
from .test_provider_history import anthropic_problems, openai_problems


class RunStopped(BaseException):
    """The run stops inside the tool, as when its task is cancelled: a tool's own error
    (an ``Exception``) would be answered as an error tool message instead."""


@tool
def flaky_lookup(key: str) -> str:
    """Look ``key`` up (the run stops in the middle)."""
    raise RunStopped("backend down")


async def test_the_turn_after_a_failed_tool_sends_a_valid_history(make_agent: Any) -> None:
    model = scripted(
        {"content": "", "tool_calls": [{"name": "flaky_lookup", "args": {"key": "a"}}]},
        {"content": "The lookup did not finish; shall I retry?"},
    )
    agent = await make_agent(model, tools=[flaky_lookup])
    with pytest.raises(RunStopped, match="backend down"):
        await agent.run_turn("t1", "look a up")
    stored = await agent.history("t1")
    assert isinstance(stored[-1], AIMessage) and stored[-1].tool_calls  # saved with its call open

    out = await agent.run_turn("t1", "and now?")

    assert out.replies == ["The lookup did not finish; shall I retry?"]
    sent = model.calls[-1]
    assert openai_problems(sent) == [] and anthropic_problems(sent) == []
    result = next(m for m in sent if isinstance(m, ToolMessage))
    # the person wrote after the failed run: the model is told so, not asked to call it again
    assert result.content == catalog.text("call_left_open") and result.status == "error"
    assert sent.index(result) == sent.index(stored[-1]) + 1  # right after its call, before "and now?"


def test_only_the_calls_without_results_are_answered() -> None:
    calls = [{"name": "a", "args": {}, "id": "c1"}, {"name": "b", "args": {}, "id": "c2"}]
    messages = [
        HumanMessage("go"),
        AIMessage(content="", tool_calls=calls),
        ToolMessage(content="done", tool_call_id="c1"),
        HumanMessage("next"),
    ]

    patched = with_every_call_answered(messages)

    assert [type(m).__name__ for m in patched] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert [m.tool_call_id for m in patched if isinstance(m, ToolMessage)] == ["c1", "c2"]
    assert with_every_call_answered(patched) == patched
    assert openai_problems(patched) == [] and anthropic_problems(patched) == []


async def test_after_a_failed_tool_the_next_message_is_sent_a_valid_history(make_agent: Any) -> None:
    """With clarify-first on, the next message of the request goes to the agent (no second check)."""

    def decide(verification: str) -> dict[str, Any]:
        args = {"need_clarification": False, "question": "", "verification": verification}
        return {"content": "", "tool_calls": [{"name": "ClarifyWithUser", "args": args}]}

    model = scripted(
        decide("Looking a up."),
        {"content": "", "tool_calls": [{"name": "flaky_lookup", "args": {"key": "a"}}]},
        {"content": "Done."},
    )
    agent = await make_agent(model, tools=[flaky_lookup], allow_clarification=True)
    with pytest.raises(RunStopped, match="backend down"):
        await agent.run_turn("t1", "look a up")

    out = await agent.run_turn("t1", "and now?")

    assert out.replies == ["Done."]
    sent = model.calls[2]
    assert openai_problems(sent) == [] and anthropic_problems(sent) == []


def test_a_result_far_from_its_call_does_not_count() -> None:
    """An id reused later (some servers number calls per message) is not the old call's result."""
    call = {"name": "a", "args": {}, "id": "0"}
    messages = [
        HumanMessage("go"),
        AIMessage(content="", tool_calls=[call]),  # its run stopped: no result
        HumanMessage("again"),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage(content="done", tool_call_id="0"),
    ]

    patched = with_every_call_answered(messages)

    assert [type(m).__name__ for m in patched][:4] == [
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "HumanMessage",
    ]
    assert patched[2].content == catalog.text("call_left_open")
    assert openai_problems(patched) == [] and anthropic_problems([*patched, HumanMessage("next")]) == []


def test_the_model_is_told_what_is_known_in_the_conversations_language() -> None:
    call = {"name": "deploy", "args": {}, "id": "c1"}
    cut_at_the_end = [HumanMessage("部署到生产环境"), AIMessage(content="", tool_calls=[call])]
    written_since = [*cut_at_the_end, HumanMessage("进展如何？")]

    (stopped,) = [m for m in with_every_call_answered(cut_at_the_end) if isinstance(m, ToolMessage)]
    (since,) = [m for m in with_every_call_answered(written_since) if isinstance(m, ToolMessage)]

    assert stopped.content == catalog.text("call_did_not_finish", "zh")
    assert since.content == catalog.text("call_left_open", "zh")
    assert "Call it again" not in str(stopped.content) + str(since.content)
