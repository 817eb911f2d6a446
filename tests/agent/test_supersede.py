"""A new message over an open approval or interrupt is a decision: the interrupt is resumed with a
rejection first, so the provider never sees an unanswered tool call, on any graph."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import catalog
from tests.agent import user_graphs
from tests.agent.conftest import AgentFactory, scripted
from tests.agent.openai_stub import Call, Stub, serving

DELETE = Call("delete_records", {"table": "users", "limit": 5}, id="call_delete")


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    user_graphs.RAN.clear()
    user_graphs.ANSWERS.clear()


@pytest.fixture(params=["make_hitl_agent", "make_per_call_hitl_agent"])
async def hitl_agent(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[ClarifyingAgent, Stub]]:
    """The operator's own create_agent + HumanInTheLoopMiddleware graph (batched and per call),
    on the refusing stub."""
    with serving(Stub(), monkeypatch) as stub:
        graph = f"tests.agent.user_graphs:{request.param}"
        agent = await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", graph=graph))
        try:
            yield agent, stub
        finally:
            await agent.aclose()


def _tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize(
    ("first", "second", "locale"),
    [
        ("clean up the users table", "actually, how many users are there?", "en"),
        ("清理 users 表", "其实，users 表里有多少条记录？", "zh"),
    ],
)
async def test_a_new_message_over_an_open_approval_rejects_it_first(
    hitl_agent: tuple[ClarifyingAgent, Stub], first: str, second: str, locale: str
) -> None:
    agent, stub = hitl_agent
    stub.replies = [[DELETE], "Not deleting.", "There are 42 users.", "Still here."]
    asked = await agent.run_turn("t", first)
    assert asked.request is not None and asked.request.clarification_type == "risk_confirmation"

    answered = await agent.run_turn("t", second)

    assert stub.refused == []  # every request held a valid history
    assert answered.replies == ["There are 42 users."] and answered.request is None
    assert user_graphs.RAN == []  # the tool never ran
    # the request that answered the new message: the call, its rejection, then the new message
    last = stub.received[-1]["messages"]
    rejection = _tool_results(stub.received[-1])
    assert [r["tool_call_id"] for r in rejection] == ["call_delete"]
    assert catalog.text("approval_superseded", locale) in rejection[0]["content"]  # type: ignore[arg-type]
    assert last[-1] == {"role": "user", "content": second}
    third = await agent.run_turn("t", "thanks")
    assert third.replies == ["Still here."] and stub.refused == []


async def test_an_answer_to_the_approval_still_resumes_it(hitl_agent: tuple[ClarifyingAgent, Stub]) -> None:
    from clarigate.agent.protocol import answer_message_text, answer_with_option

    agent, stub = hitl_agent
    stub.replies = [[DELETE], "Deleted 5 users."]
    asked = await agent.run_turn("t", "clean up the users table")
    assert asked.request is not None
    approve = answer_with_option(asked.request, asked.request.options[0].id, None)

    done = await agent.run_turn("t", answer_message_text(asked.request, approve), approve)

    assert done.replies == ["Deleted 5 users."] and user_graphs.RAN == ["delete users 5"]
    assert stub.refused == []


async def test_a_plain_interrupt_gets_the_superseded_value() -> None:
    graph = "tests.agent.user_graphs:make_graph"
    settings = AgentSettings(checkpointer_url="memory://", graph=graph)
    async with await ClarifyingAgent.create(settings) as agent:
        asked = await agent.run_turn("t", "deploy it")
        assert asked.request is not None and asked.request.question == "Which region?"

        await agent.run_turn("t", "what did I deploy last week?")

    (answer,) = user_graphs.ANSWERS  # the declined answer, with the reason
    assert answer["response_kind"] == "declined" and answer["reason"] == "superseded"
    assert answer["request_id"] == asked.request.request_id
    assert user_graphs.RAN == []  # the graph took it as "not deploying"


async def test_a_free_text_interrupt_gets_the_declined_text() -> None:
    graph = "tests.agent.user_graphs:free_text"
    settings = AgentSettings(checkpointer_url="memory://", graph=graph)
    async with await ClarifyingAgent.create(settings) as agent:
        await agent.run_turn("t", "release it")
        await agent.run_turn("t", "what is the weather?")
        history = await agent.history("t")

    assert user_graphs.ANSWERS == [catalog.text("declined_value", "en")]
    assert [m.text for m in history if m.type == "ai"][0] == f"Release {catalog.text('declined_value')}."


async def test_the_built_in_agent_is_told_the_person_wrote_something_else(make_agent: AgentFactory) -> None:
    delete = {"name": "delete_records", "args": {"table": "users", "limit": 5}}
    model = scripted(
        {"tool_calls": [delete]}, {"content": "(not shown)"}, {"content": "You said: {last_user}"}
    )
    agent = await make_agent(
        model,
        tool_paths=("tests.agent.user_graphs:delete_records",),
        require_approval={"delete_records": ["approve", "reject"]},
    )
    await agent.run_turn("t", "清理 users 表")

    out = await agent.run_turn("t", "算了，先看看有多少条")

    assert out.replies == ["You said: 算了，先看看有多少条"] and user_graphs.RAN == []
    results = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
    assert len(results) == 1 and catalog.text("approval_superseded", "zh") in results[0].text
