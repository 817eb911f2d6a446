"""Operator tools, instructions, own graphs, approvals and limits, through the harness."""

from __future__ import annotations

import json
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
from tests.agent.typed_graphs import SCHEMA, TRIP

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
    # an English label reaching a Chinese approval as text, not as its option picked (the gateway
    # reads it as 批准 picked, then asks for the confirmation): asked again, never approved at once
    agent = await make_agent(scripted({"tool_calls": [DELETE]}, {"content": "ok"}), **settings)
    asked = await agent.run_turn("z2", "删除测试数据")
    typed = answer_with_text(asked.request, "Approve", None)
    again = await agent.run_turn("z2", answer_message_text(asked.request, typed), typed)
    assert user_graphs.RAN == [] and again.request is not None
    assert [o.label for o in again.request.options] == ["批准", "拒绝"]
    assert "批准" in again.replies[-1]
    await _answer(agent, "z2", again, "批准")
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


# --- what a question cannot hold is shown in full right above it -------------------------------

LONG_QUERY = "SELECT id, name, email, created_at FROM customers WHERE created_at > '2024-01-01' " + (
    "AND status = 'active' " * 5
)
TWO_CALLS = [
    {"name": "run_sql", "args": {"query": LONG_QUERY}},
    {"name": "drop_table", "args": {"name": "customers"}},
]
GATED = {
    "tool_paths": ("tests.agent.user_graphs:run_sql", "tests.agent.user_graphs:drop_table"),
    "require_approval": {"run_sql": ["approve", "reject"], "drop_table": ["approve", "reject"]},
}


def _fits_the_protocol(request: Any) -> None:
    """Every string of ``request`` within the protocol's 200 characters, all of it within 16 KB."""
    texts = [request.question, request.context or "", *(o.label for o in request.options)]
    assert all(len(text) <= 200 for text in texts), texts
    assert len(json.dumps(request.to_artifact())) <= 16 * 1024


@pytest.mark.parametrize(
    ("said", "above"),
    [
        ("how many active customers do we have?", "Every call is shown in full above."),
        ("我们有多少活跃客户？", "每个调用的完整内容见上方。"),
    ],
)
async def test_an_approval_shows_every_call_approve_runs_in_full(
    make_agent: AgentFactory, said: str, above: str
) -> None:
    """Two gated calls at once, one with a long query: one Approve runs both, so the person reads
    both in full before the question (the request holds 200 characters a string: it names both
    calls and says the rest is above), and Approve then runs both."""
    agent = await make_agent(scripted({"tool_calls": TWO_CALLS}, {"content": "Done."}), **GATED)
    asked = await agent.run_turn("sql", said)
    request = asked.request
    _fits_the_protocol(request)
    *_, shown = asked.replies  # the last reply, right before the question: a code block
    assert shown == f'```\nrun_sql(query={json.dumps(LONG_QUERY)})\ndrop_table(name="customers")\n```'
    assert request.context.startswith(above)
    assert "`run_sql(query=" in request.context and request.context.endswith('`drop_table(name="customers")`')
    await _answer(agent, "sql", asked, request.options[0].label)  # Approve (批准)
    assert user_graphs.RAN == [f"run_sql {LONG_QUERY}", "drop_table customers"]


async def test_an_approval_that_fits_shows_nothing_above(make_agent: AgentFactory) -> None:
    agent = await make_agent(scripted({"tool_calls": [TWO_CALLS[1]]}, {"content": "Done."}), **GATED)
    asked = await agent.run_turn("drop", "drop the customers table")
    assert asked.replies == []
    assert asked.request.context == '`drop_table(name="customers")`'


async def test_an_approval_no_decision_turns_down_is_turned_down_by_other_words(
    make_agent: AgentFactory,
) -> None:
    """An approval no decision can turn down (approve and edit only), answered with something
    else: its calls are turned down all the same, with those words as what the model reads; none
    runs, and the model goes on."""
    settings = {
        **GATED,
        "require_approval": {"run_sql": ["approve", "edit"], "drop_table": ["approve", "edit"]},
    }
    agent = await make_agent(scripted({"tool_calls": TWO_CALLS}, {"content": "Done."}), **settings)
    asked = await agent.run_turn("held", "how many active customers do we have?")
    went_on = await _answer(agent, "held", asked, "hmm, not sure")
    assert went_on.request is None and went_on.replies == ["Done."]
    history = await agent.history("held")
    results = [(m.name, m.text) for m in history if m.type == "tool"]
    assert results == [("run_sql", "hmm, not sure"), ("drop_table", "hmm, not sure")]
    assert user_graphs.RAN == []


async def _own_graph(name: str) -> ClarifyingAgent:
    return await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.user_graphs:{name}")
    )


async def test_an_interrupt_shows_the_content_it_asks_to_review() -> None:
    """``interrupt({"question": "Is this correct?", "llm_output": …})``, LangGraph's review
    pattern: the person sees the output they are asked to confirm (it fits: in the context)."""
    agent = await _own_graph("review")
    try:
        asked = await agent.run_turn("r", "summarize the ACME ticket")
        assert asked.request.question == "Is this correct?"
        assert asked.request.context == user_graphs.REVIEWED["llm_output"]
        assert asked.replies == []
        done = await _answer(agent, "r", asked, "yes")
        assert done.replies == ["Noted."] and user_graphs.ANSWERS[-1]["value"] == "yes"
    finally:
        await agent.aclose()


async def test_a_long_review_and_several_keys_are_shown_in_full_above(monkeypatch: Any) -> None:
    draft = "Dear ACME, " + "we will refund every invoice of 2024 in full. " * 20
    monkeypatch.setitem(user_graphs.REVIEWED, "llm_output", draft)
    monkeypatch.setitem(user_graphs.REVIEWED, "context", "Ticket #42")
    monkeypatch.setitem(user_graphs.REVIEWED, "recipients", ["billing@acme.example"])
    agent = await _own_graph("review")
    try:
        asked = await agent.run_turn("r", "draft the refund mail")
        _fits_the_protocol(asked.request)
        assert asked.request.question == "Is this correct?"
        assert asked.request.context == "Shown in full above."
        shown = asked.replies[-1]
        assert "Ticket #42" in shown and f"llm_output: {draft.strip()}" in shown
        assert 'recipients: ["billing@acme.example"]' in shown
    finally:
        await agent.aclose()


async def test_a_long_interrupt_text_keeps_its_question(monkeypatch: Any) -> None:
    """``interrupt(plan)``, a plan of a few lines ending in a question: the question is asked as
    such and the plan shown in full right above it; the graph gets the answer typed."""
    agent = await _own_graph("plan")
    try:
        asked = await agent.run_turn("p", "migrate the shards")
        _fits_the_protocol(asked.request)
        assert asked.request.question == "Shall I start now, or wait for the weekend?"
        assert asked.request.context == "Shown in full above."
        plan = user_graphs.PLAN.rsplit("\n", 1)[0]
        assert asked.replies == [f"```\n{plan}\n```"]
        done = await agent.run_turn("p", "wait", answer_with_text(asked.request, "wait", None))
        assert done.replies == ["Plan answer: wait"]
        # a text with no question of its own: all of it above, and a question that says so
        monkeypatch.setattr(user_graphs, "PLANNED", ["Step. " * 60 + "Tell me when it suits you."])
        asked = await agent.run_turn("q", "migrate the shards")
        assert asked.request.question == "What is your answer to the text above?"
        assert user_graphs.PLANNED[-1] in asked.replies[-1]
    finally:
        await agent.aclose()


def test_a_question_shown_with_nothing_above_it_keeps_what_fits_and_claims_nothing() -> None:
    """The request alone (a question shown again later, a LangGraph server's pending interrupt):
    the question found, every call named, and no word of text above that is not there."""
    from clarigate.agent.interrupts import request_for

    plan = request_for("i1", user_graphs.PLAN)
    assert plan.question == "Shall I start now, or wait for the weekend?"
    assert plan.context.startswith("Here is the migration plan.") and plan.context.endswith("…")
    calls = {"action_requests": TWO_CALLS, "review_configs": []}
    approval = request_for("i2", calls)
    _fits_the_protocol(approval)
    assert "above" not in approval.context
    assert approval.context.startswith("`run_sql(query=") and approval.context.endswith(
        '`drop_table(name="customers")`'
    )


#: A booking every field of ``typed_graphs.CheckedBooking`` takes.
BOOKING = {"name": "Ada", "guests": 4, "budget": 12, "color": "blue", "day": "2026-12-01"}


async def test_a_typed_question_longer_than_a_question_holds_is_shown_in_full_above() -> None:
    """``interrupt(trip, response_schema=Model)``, a trip of several lines ending in its question
    (more than the 200 characters a question holds): the form asks that question, the trip (and
    the model's description) shown in full right above it; again so when an answer breaking a
    bound, or one only the graph's model refuses, is asked again. The graph then gets its model."""
    agent = await ClarifyingAgent.create(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.typed_graphs:long_booking")
    )
    try:
        asked = await agent.run_turn("long", "book my trip")
        request = asked.request
        _fits_the_protocol(request)
        assert request.input_mode == "form" and request.question == "Who travels, and when?"
        assert request.context == "Shown in full above." and len(request.fields) == 8
        trip = TRIP.rsplit("\n", 1)[0]
        assert asked.replies == [f"```\n{trip}\n\nWho travels, when, and how.\n```"]

        bad = answer_with_form(request, {**BOOKING, "guests": 20}, None)
        again = await agent.run_turn("long", answer_message_text(request, bad), bad)
        assert again.request.context == "Guests: Must be at most 10\nShown in full above."
        assert again.replies == asked.replies

        refused = answer_with_form(again.request, {**BOOKING, "name": "Ada1"}, None)
        third = await agent.run_turn("long", answer_message_text(again.request, refused), refused)
        assert "a name has no digits" in (third.request.context or "")
        assert (third.request.context or "").endswith("Shown in full above.")
        assert third.replies == asked.replies

        good = answer_with_form(third.request, BOOKING, None)
        done = await agent.run_turn("long", answer_message_text(third.request, good), good)
        assert done.replies == ["Booked for Ada."]
    finally:
        await agent.aclose()


def test_a_long_typed_question_shown_alone_keeps_its_question_and_claims_nothing_above() -> None:
    from clarigate.agent.interrupts import request_for

    request = request_for("i8", TRIP, schema=SCHEMA)
    _fits_the_protocol(request)
    assert request.input_mode == "form" and request.question == "Who travels, and when?"
    assert (request.context or "").startswith("Here is the trip I found.")
    assert "above" not in (request.context or "")
