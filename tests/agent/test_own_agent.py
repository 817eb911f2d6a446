"""Operator tools, instructions, own graphs, approvals and limits, through the harness."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import (
    HumanInputResponse,
    answer_message_text,
    answer_with_form,
    answer_with_option,
    answer_with_text,
    parse_typed_reply,
)
from tests.agent import user_graphs
from tests.agent.conftest import AgentFactory, scripted

DELETE = {"name": "delete_records", "args": {"table": "users", "limit": 5}}


@pytest.fixture(autouse=True)
def _fresh_log() -> None:
    user_graphs.RAN.clear()


async def _answer(agent: ClarifyingAgent, thread: str, out: Any, text: str) -> Any:
    """Type ``text`` as the person would (a label picks an option)."""
    reply = parse_typed_reply(out.request, text, None)
    assert reply.response is not None, reply.problems
    return await agent.run_turn(thread, answer_message_text(out.request, reply.response), reply.response)


async def test_tools_by_import_path_and_instructions_from_a_file(tmp_path: Any) -> None:
    prompt = tmp_path / "instructions.txt"
    prompt.write_text("Always answer like a pirate.", encoding="utf-8")
    model = scripted({"tool_calls": [{"name": "lookup", "args": {"term": "x"}}]}, {"content": "Arr."})
    agent = await ClarifyingAgent.create(
        AgentSettings(
            checkpointer_url="memory://",
            instructions=str(prompt),
            tools=("tests.agent.user_graphs:lookup", "tests.agent.user_graphs:delete_records"),
        ),
        model=model,
    )
    try:
        out = await agent.run_turn("t", "find x")
    finally:
        await agent.aclose()
    assert out.replies == ["Arr."]
    system = model.calls[0][0].text
    assert system.endswith("Always answer like a pirate.") and "ask_clarification" in system
    assert model.calls[1][-1].text == "x: found"  # the async function ran as a tool


async def test_a_tool_path_that_does_not_import_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no_such_module"):
        await ClarifyingAgent.create(
            AgentSettings(checkpointer_url="memory://", tools=("no_such_module:tool",))
        )


async def test_approval_approved_rejected_and_edited(make_agent: AgentFactory) -> None:
    turns = [{"tool_calls": [DELETE]}, {"content": "{last_user}"}]
    settings: dict[str, Any] = {
        "tool_paths": ("tests.agent.user_graphs:delete_records",),
        "require_approval": {"delete_records": ["approve", "edit", "reject"]},
    }
    # approved
    agent = await make_agent(scripted(*turns), **settings)
    asked = await agent.run_turn("a", "clean up users")
    request = asked.request
    assert request is not None and request.clarification_type == "risk_confirmation"
    assert [o.label for o in request.options] == ["Approve", "Reject", "Edit"]
    assert "delete_records" in request.question and '"users"' in (request.context or "")
    assert user_graphs.RAN == []
    assert await agent.pending_request("a") == request  # found again after a restart
    done = await _answer(agent, "a", asked, "approve")
    assert user_graphs.RAN == ["delete users 5"] and done.request is None
    # rejected with a reason, typed
    agent = await make_agent(scripted(*turns), **settings)
    asked = await agent.run_turn("r", "clean up users")
    await _answer(agent, "r", asked, "not today, it is Friday")
    assert user_graphs.RAN == ["delete users 5"]
    history = await agent.history("r")
    assert "not today, it is Friday" in history[-2].text and history[-2].status == "error"
    # edited through the form
    agent = await make_agent(scripted(*turns), **settings)
    asked = await agent.run_turn("e", "clean up users")
    form = await agent.run_turn("e", "Edit", answer_with_option(asked.request, "option-3", None))
    assert form.request is not None and form.request.input_mode == "form"
    assert {f.name: (f.type, f.placeholder) for f in form.request.fields} == {
        "table": ("text", "users"),
        "limit": ("number", "5"),
    }
    edited = answer_with_form(form.request, {"limit": "2"}, None)
    await agent.run_turn("e", answer_message_text(form.request, edited), edited)
    assert user_graphs.RAN == ["delete users 5", "delete users 2"]


async def test_a_declined_approval_rejects_and_chinese_labels(make_agent: AgentFactory) -> None:
    settings: dict[str, Any] = {
        "tool_paths": ("tests.agent.user_graphs:delete_records",),
        "require_approval": {"delete_records": ["approve", "reject"]},
    }
    agent = await make_agent(scripted({"tool_calls": [DELETE]}, {"content": "好的"}), **settings)
    asked = await agent.run_turn("z", "删除测试数据")
    assert [o.label for o in asked.request.options] == ["批准", "拒绝"]
    assert asked.request.locale == "zh"
    declined = HumanInputResponse(request_id=asked.request.request_id, response_kind="declined", value="取消")
    out = await agent.run_turn("z", "取消", declined)
    assert out.replies == ["好的"] and user_graphs.RAN == []
    # a typed English label answers a Chinese approval too
    agent = await make_agent(scripted({"tool_calls": [DELETE]}, {"content": "ok"}), **settings)
    asked = await agent.run_turn("z2", "删除测试数据")
    await _answer(agent, "z2", asked, "Approve")
    assert user_graphs.RAN == ["delete users 5"]


async def test_the_model_cannot_skip_approval_by_asking_at_once(make_agent: AgentFactory) -> None:
    """A call under approval next to a clarification is not run and not asked about."""
    ask = {
        "name": "ask_clarification",
        "args": {"question": "Sure?", "clarification_type": "risk_confirmation"},
    }
    agent = await make_agent(
        scripted({"tool_calls": [DELETE, ask]}, {"content": "fine"}),
        tool_paths=("tests.agent.user_graphs:delete_records",),
        require_approval={"delete_records": None},
    )
    out = await agent.run_turn("s", "clean up")
    assert out.request is not None and out.request.source == "ask_clarification"
    assert user_graphs.RAN == []


@pytest.mark.parametrize("path", ["tests.agent.user_graphs:make_graph", "tests.agent.user_graphs:compiled"])
async def test_own_graph_with_interrupt(path: str) -> None:
    agent = await ClarifyingAgent.create(AgentSettings(checkpointer_url="memory://", graph=path))
    try:
        asked = await agent.run_turn("g", "deploy")
        assert asked.request is not None and asked.request.request_id.startswith("interrupt:")
        assert [o.label for o in asked.request.options] == ["eu-west", "us-east"]
        done = await _answer(agent, "g", asked, "2")
        assert done.replies == ["Deployed to us-east."] and user_graphs.RAN == ["us-east"]
        # and again on the same thread: a new request asks again
        again = await agent.run_turn("g", "deploy again")
        declined = HumanInputResponse(
            request_id=again.request.request_id, response_kind="declined", value="x"
        )
        assert (await agent.run_turn("g", "x", declined)).replies == ["Not deploying."]
    finally:
        await agent.aclose()


async def test_plain_and_free_text_graphs() -> None:
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:plain")
    )
    try:
        assert (await agent.run_turn("p", "hello")).replies == ["echo: hello"]
    finally:
        await agent.aclose()
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:free_text")
    )
    try:
        asked = await agent.run_turn("f", "release")
        assert asked.request.question == "Type the release name" and asked.request.input_mode == "free_text"
        response = answer_with_text(asked.request, "v2.1", None)
        assert (await agent.run_turn("f", "v2.1", response)).replies == ["Release v2.1."]
    finally:
        await agent.aclose()


async def test_limits_end_the_run_honestly_and_the_thread_stays_usable(make_agent: AgentFactory) -> None:
    loop = [{"tool_calls": [{"name": "lookup", "args": {"term": f"t{i}"}}]} for i in range(40)]
    model = scripted(*loop)
    agent = await make_agent(model, max_model_calls=3, tool_paths=("tests.agent.user_graphs:lookup",))
    out = await agent.run_turn("l", "search everything")
    assert out.limit == "model_calls" and "more steps" in out.replies[-1]
    assert len(model.calls) == 3
    model.turns = [*model.turns[:0]]  # the script is over: the next message gets a plain reply
    again = await agent.run_turn("l", "thanks")
    assert again.replies and again.limit is None

    agent = await make_agent(
        scripted(*loop), max_tool_calls=2, tool_paths=("tests.agent.user_graphs:lookup",)
    )
    out = await agent.run_turn("m", "search everything")
    assert out.limit == "tool_calls" and "tool calls" in out.replies[-1]

    agent = await make_agent(
        scripted(*loop), recursion_limit=6, tool_paths=("tests.agent.user_graphs:lookup",)
    )
    out = await agent.run_turn("n", "查一下所有东西")
    assert out.limit == "recursion" and "我先停在这里" in out.replies[-1]


async def test_token_usage_per_run(make_agent: AgentFactory) -> None:
    usage = {"input_tokens": 30, "output_tokens": 4}
    agent = await make_agent(
        scripted(
            {"tool_calls": [{"name": "lookup", "args": {"term": "a"}}], "usage": usage},
            {"content": "done", "usage": usage},
        ),
        tool_paths=("tests.agent.user_graphs:lookup",),
    )
    out = await agent.run_turn("u", "look a up")
    assert out.usage == {"scripted": {"input": 60, "output": 8}}


async def test_own_create_agent_with_clarigates_tool_and_middleware() -> None:
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:make_clarifying_agent")
    )
    try:
        asked = await agent.run_turn("c", "clean up")
        assert asked.request is not None and [o.label for o in asked.request.options] == ["users", "orders"]
        done = await _answer(agent, "c", asked, "orders")
        assert done.replies and done.replies[0].startswith("Cleaning") and "orders" in done.replies[0]
    finally:
        await agent.aclose()


async def test_long_threads_are_summarized_past_the_threshold(make_agent: AgentFactory) -> None:
    model = scripted(*[{"content": "x" * 4000} for _ in range(10)])
    agent = await make_agent(model, summarize_after_tokens=1000)
    for _ in range(4):
        out = await agent.run_turn("s", "tell me more " * 50)
        assert out.replies == ["x" * 4000]
    history = await agent.history("s")
    assert len(history) <= 4  # older turns became one summary
    assert len(model.calls) > 4  # the summaries were written by the model
