"""ask_clarification ends the run, keeps history valid, and the answer continues the thread."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from clarigate.agent.middleware import answer_clarification
from clarigate.agent.models.scripted import ScriptedChatModel
from clarigate.agent.prompts import NOT_RUN_WHILE_ASKING, PROCEED_WITHOUT_ANSWER
from clarigate.agent.protocol import answer_message_text, answer_with_option, render_text_fallback
from clarigate.agent.protocol.wire import response_from_kwargs

from .conftest import ask, assert_provider_valid, scripted
from .test_provider_history import anthropic_problems, openai_problems


async def test_run_ends_after_asking_with_one_model_call(make_agent: Any) -> None:
    model = scripted(
        {"content": "", "tool_calls": [ask(options=["React", "Vue"])]}, {"content": "never played"}
    )
    agent = await make_agent(model)

    out = await agent.run_turn("t1", "build me a frontend")

    assert len(model.calls) == 1
    system = model.calls[0][0]
    assert isinstance(system, SystemMessage)
    assert "Clarify." in system.content and "Plan." in system.content and "Act." in system.content
    assert 'clarification_type="risk_confirmation"' in system.content
    assert out.replies == []
    assert out.request is not None
    assert out.request.question == "Which framework?"
    assert [o.label for o in out.request.options] == ["React", "Vue"]
    assert out.request.input_mode == "choice_with_other"
    assert out.fallback_text == render_text_fallback(out.request)
    stored = (await agent.history("t1"))[-1]
    assert isinstance(stored, ToolMessage)
    assert stored.id == out.request.request_id == f"clarification:{out.request.tool_call_id}"
    assert stored.artifact == {"human_input": out.request.to_artifact()}
    assert await agent.pending_request("t1") == out.request


async def test_sibling_calls_are_not_run_and_history_stays_valid(make_agent: Any, recorder: Any) -> None:
    turn = {
        "content": "",
        "tool_calls": [
            {"name": "record_note", "args": {"note": "before"}},
            ask("First question?"),
            ask("Second question?"),
            {"name": "record_note", "args": {"note": "after"}},
        ],
    }
    model = scripted(turn)
    agent = await make_agent(model, tools=[recorder.tool])

    out = await agent.run_turn("t1", "do several things")

    assert recorder.ran == []
    assert len(model.calls) == 1
    assert out.request is not None and out.request.question == "First question?"
    history = await agent.history("t1")
    assert_provider_valid(history)
    results = [m for m in history if isinstance(m, ToolMessage)]
    assert [m.content for m in results].count(NOT_RUN_WHILE_ASKING) == 3
    assert sum(bool(m.artifact) for m in results) == 1
    # The request is the thread's last message even though sibling calls followed the
    # question, so a restarted client still finds the open question.
    assert history[-1].artifact == {"human_input": out.request.to_artifact()}
    assert await agent.pending_request("t1") == out.request


class _ListContentModel(ScriptedChatModel):
    """Answers like Anthropic does: list content with a tool_use block per call, plus a stray one."""

    def reply_to(self, messages: Any) -> AIMessage:
        return AIMessage(
            content=[
                {"type": "text", "text": "Let me ask."},
                {"type": "tool_use", "id": "toolu_ask", "name": "ask_clarification", "input": {}},
                {"type": "tool_use", "id": "toolu_stray", "name": "record_note", "input": {"note": "x"}},
            ],
            tool_calls=[{"name": "ask_clarification", "args": {"question": "Which one?"}, "id": "toolu_ask"}],
        )


async def test_stray_tool_use_blocks_are_removed_from_list_content(make_agent: Any) -> None:
    agent = await make_agent(_ListContentModel())

    out = await agent.run_turn("t1", "go")

    history = await agent.history("t1")
    assert_provider_valid(history)
    ai = next(m for m in history if isinstance(m, AIMessage))
    assert [b["id"] for b in ai.content if b.get("type") == "tool_use"] == ["toolu_ask"]
    assert out.request is not None and out.request.tool_call_id == "toolu_ask"


def test_a_message_without_a_question_is_left_alone() -> None:
    plain = AIMessage(content="", tool_calls=[{"name": "record_note", "args": {}, "id": "c1"}])
    assert answer_clarification(plain) is None


async def test_sloppy_arguments_still_ask(make_agent: Any) -> None:
    sloppy = {
        "name": "ask_clarification",
        "args": {"question": "Pick", "options": '["a", "a", "b"]', "clarification_type": "nonsense"},
    }
    agent = await make_agent(scripted({"content": "", "tool_calls": [sloppy]}))

    out = await agent.run_turn("t1", "go")

    assert out.request is not None
    assert [o.label for o in out.request.options] == ["a", "b"]


async def test_answer_run_continues_and_model_sees_the_structured_answer(make_agent: Any) -> None:
    model = scripted(
        {"content": "", "tool_calls": [ask(options=["React", "Vue"])]},
        {"content": "Scaffolding with your choice. ({last_user})"},
    )
    agent = await make_agent(model)
    asked = await agent.run_turn("t1", "build me a frontend")
    assert asked.request is not None
    response = answer_with_option(asked.request, "option-2", None)
    text = answer_message_text(asked.request, response)

    out = await agent.run_turn("t1", text, response)

    assert out.request is None
    assert out.replies == [f"Scaffolding with your choice. ({text})"]
    assert len(model.calls) == 2
    seen = model.calls[1]
    assert isinstance(seen[-1], HumanMessage)
    assert response_from_kwargs(seen[-1].additional_kwargs) == response
    assert seen[-1].additional_kwargs["human_input_response"]["value"] == "Vue"
    assert (
        isinstance(seen[-2], ToolMessage) and seen[-2].artifact["human_input"] == asked.request.to_artifact()
    )
    assert_provider_valid(seen)
    assert await agent.pending_request("t1") is None


async def test_disable_clarification_lets_the_run_continue(make_agent: Any) -> None:
    model = scripted(
        {"content": "", "tool_calls": [ask()]},
        {"content": "I picked React and noted the assumption."},
    )
    agent = await make_agent(model, disable_clarification=True)

    out = await agent.run_turn("t1", "build me a frontend")

    assert out.request is None
    assert out.replies == ["I picked React and noted the assumption."]
    assert len(model.calls) == 2
    answered = model.calls[1][-1]
    assert isinstance(answered, ToolMessage) and answered.content == PROCEED_WITHOUT_ANSWER
    assert not answered.artifact


class _NumbersItsCalls(ScriptedChatModel):
    """Like some OpenAI-compatible servers: call ids restart at "0" in every message."""

    def reply_to(self, messages: Any) -> AIMessage:
        if "answer is" in str(messages[-1].content):
            return AIMessage(content="Thanks.")
        ask = {"question": f"About {messages[-1].content}?", "options": ["a", "b"]}
        calls = [
            {"name": "ask_clarification", "args": ask, "id": "0"},
            {"name": "record_note", "args": {"note": "x"}, "id": "0"},
        ]
        blocks = [{"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls]
        return AIMessage(content=[{"type": "text", "text": "First:"}, *blocks], tool_calls=calls)


async def test_reused_call_ids_still_ask_and_keep_the_history_valid(make_agent: Any, recorder: Any) -> None:
    agent = await make_agent(_NumbersItsCalls(), tools=[recorder.tool])

    first = await agent.run_turn("t1", "one")
    assert first.request is not None
    answer = answer_with_option(first.request, "option-1", None)
    await agent.run_turn("t1", answer_message_text(first.request, answer), answer)
    second = await agent.run_turn("t1", "two")

    assert second.request is not None and second.request.question == "About two?"
    assert second.request.request_id != first.request.request_id
    assert await agent.pending_request("t1") == second.request
    history = await agent.history("t1")
    assert_provider_valid(history)
    assert anthropic_problems([*history, HumanMessage("next")]) == []
    assert openai_problems(history) == []
    assert recorder.ran == []


def _shape(item: Any) -> tuple[Any, ...]:
    """A run event or a stored message without its ids (fresh call ids differ between runs)."""
    if isinstance(item, AIMessage | HumanMessage | ToolMessage):
        calls = [c["name"] for c in getattr(item, "tool_calls", [])]
        return (
            item.type,
            item.content if isinstance(item.content, str) else "",
            calls,
            getattr(item, "status", ""),
        )
    return (
        type(item).__name__,
        getattr(item, "name", ""),
        getattr(item, "ok", None),
        getattr(item, "text", ""),
    )


async def test_asking_in_the_model_step_gives_what_the_after_model_hook_gives(
    make_agent: Any, recorder: Any
) -> None:
    """With no other ``after_model`` hook the clarification is answered in the model step (one graph
    step fewer); the events and the thread are those of the hook, which a tool limit brings back."""
    seen: dict[str, tuple[list[Any], list[Any]]] = {}
    for kind, settings in (("model step", {}), ("hook", {"max_tool_calls": 10})):
        agent = await make_agent(_NumbersItsCalls(), tools=[recorder.tool], **settings)
        hooked = "ClarificationMiddleware.after_model" in agent._graph.nodes
        assert hooked == (kind == "hook")
        events: list[Any] = []

        async def keep(event: Any, events: list[Any] = events) -> None:
            events.append(event)

        first = await agent.run_turn("t1", "one", on_event=keep)
        assert first.request is not None
        answer = answer_with_option(first.request, "option-1", None)
        await agent.run_turn("t1", answer_message_text(first.request, answer), answer, on_event=keep)
        await agent.run_turn("t1", "two", on_event=keep)
        seen[kind] = ([_shape(e) for e in events], [_shape(m) for m in await agent.history("t1")])

    assert seen["model step"] == seen["hook"]
    assert any(shape[0] == "Asking" for shape in seen["hook"][0])
    assert recorder.ran == []
