"""The clarify-first phase: asks once through the same request, then verifies and proceeds."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, SystemMessage

from clarigate.agent.models.scripted import ScriptedChatModel
from clarigate.agent.prompts import ALREADY_ASKED_NOTE, CLARIFY_FIRST_MARKER
from clarigate.agent.protocol import answer_message_text, parse_typed_reply

from .conftest import scripted


def decide(need: bool, question: str = "", verification: str = "") -> dict[str, Any]:
    """A scripted turn answering the clarify-first check."""
    args = {"need_clarification": need, "question": question, "verification": verification}
    return {"content": "", "tool_calls": [{"name": "ClarifyWithUser", "args": args}]}


async def _answer(agent: Any, thread: str, request: Any, text: str) -> Any:
    response = parse_typed_reply(request, text, None).response
    assert response is not None
    return await agent.run_turn(thread, answer_message_text(request, response), response)


async def test_asks_once_then_verifies_and_proceeds(make_agent: Any) -> None:
    model = scripted(
        decide(True, question="Which report do you mean?"),
        decide(False, verification="Got it: the weekly sales report. Starting now."),
        {"content": "Here is the weekly sales report."},
    )
    agent = await make_agent(model, allow_clarification=True)

    asked = await agent.run_turn("t1", "make the report")

    assert len(model.calls) == 1  # only the check ran: the agent did not act
    assert CLARIFY_FIRST_MARKER in model.calls[0][0].content
    assert asked.replies == []
    assert asked.request is not None
    assert asked.request.input_mode == "free_text"
    assert asked.request.question == "Which report do you mean?"
    assert asked.fallback_text and "Which report do you mean?" in asked.fallback_text

    done = await _answer(agent, "t1", asked.request, "the weekly sales one")

    assert done.request is None
    assert done.replies == [
        "Got it: the weekly sales report. Starting now.",
        "Here is the weekly sales report.",
    ]
    second_check = model.calls[1]
    assert ALREADY_ASKED_NOTE in second_check[0].content
    assert len(model.calls) == 3
    assert await agent.pending_request("t1") is None


async def test_proceeds_with_the_verification_when_clear(make_agent: Any) -> None:
    model = scripted(
        decide(False, verification="Understood: a haiku about tea."), {"content": "Steam curls..."}
    )
    agent = await make_agent(model, allow_clarification=True)

    out = await agent.run_turn("t1", "write a haiku about tea")

    assert out.replies == ["Understood: a haiku about tea.", "Steam curls..."]
    assert out.request is None
    agent_call = model.calls[1]
    assert not any(CLARIFY_FIRST_MARKER in m.content for m in agent_call if isinstance(m, SystemMessage))


async def test_does_not_keep_asking_in_the_same_thread(make_agent: Any) -> None:
    model = scripted(
        decide(True, question="Which report?"),
        decide(True, question="Which week?"),  # allowed once more: "absolutely necessary"
        {"content": "Working on it with what I have."},
    )
    agent = await make_agent(model, allow_clarification=True)

    first = await agent.run_turn("t1", "make the report")
    second = await _answer(agent, "t1", first.request, "sales")
    third = await _answer(agent, "t1", second.request, "last week")

    assert second.request is not None and second.request.question == "Which week?"
    assert third.request is None
    assert third.replies == ["Working on it with what I have."]
    assert len(model.calls) == 3  # no third check: the agent went straight on


async def test_answers_to_the_agents_own_questions_skip_the_check(make_agent: Any) -> None:
    model = scripted(
        decide(False, verification="Understood."),
        {"content": "", "tool_calls": [{"name": "ask_clarification", "args": {"question": "Vue or React?"}}]},
        {"content": "Using {last_user}"},
    )
    agent = await make_agent(model, allow_clarification=True)
    asked = await agent.run_turn("t1", "build a frontend")
    assert asked.replies == ["Understood."] and asked.request is not None

    out = await _answer(agent, "t1", asked.request, "Vue")

    assert len(model.calls) == 3
    assert out.replies and out.replies[0].startswith("Using ")


class _MalformedFirst(ScriptedChatModel):
    """The first check answer does not fit the schema; the retry does."""

    def reply_to(self, messages: Any) -> AIMessage:
        if len(self.calls) == 1:
            bad = {"need_clarification": "perhaps?", "question": 7}
            return AIMessage(content="", tool_calls=[{"name": "ClarifyWithUser", "args": bad, "id": "c1"}])
        if len(self.calls) == 2:
            args = {"need_clarification": False, "verification": "Clear enough."}
            return AIMessage(content="", tool_calls=[{"name": "ClarifyWithUser", "args": args, "id": "c2"}])
        return AIMessage(content="Done.")


async def test_a_malformed_check_is_retried(make_agent: Any) -> None:
    model = _MalformedFirst()
    agent = await make_agent(model, allow_clarification=True)

    out = await agent.run_turn("t1", "summarise the notes")

    assert out.replies == ["Clear enough.", "Done."]
    assert len(model.calls) == 3


async def test_the_check_runs_once_per_request_not_on_every_message(make_agent: Any) -> None:
    model = scripted(
        decide(False, verification="Understood: a haiku."),
        {"content": "Steam curls..."},
        {"content": "Another one: leaves fall..."},
    )
    agent = await make_agent(model, allow_clarification=True)
    first = await agent.run_turn("t1", "write a haiku about tea")
    assert first.replies == ["Understood: a haiku.", "Steam curls..."]

    second = await agent.run_turn("t1", "one more please")

    assert second.replies == ["Another one: leaves fall..."]  # no second verification posted
    assert len(model.calls) == 3
    assert not any(
        CLARIFY_FIRST_MARKER in str(m.content) for m in model.calls[2] if isinstance(m, SystemMessage)
    )
    # a new thread is a new request: the check runs again
    model.turns.append(model.turns[0])
    await agent.run_turn("t2", "write a limerick")
    assert CLARIFY_FIRST_MARKER in str(model.calls[3][0].content)


async def test_a_failed_check_posts_nothing(make_agent: Any) -> None:
    model = scripted({"content": "Done."})  # the check gets no decision out of this, three times
    agent = await make_agent(model, allow_clarification=True)
    out = await agent.run_turn("t1", "do the thing")
    assert out.replies == ["Done."] and out.request is None
