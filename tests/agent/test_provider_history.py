"""After a clarification with sibling calls, the history is one a real provider accepts.

The checks build the request a provider would get: the OpenAI messages through
``langchain_openai``'s own conversion, and the Anthropic messages by its rules
(consecutive tool results and human text merge into one user message; every
``tool_use`` is answered by a ``tool_result`` in the very next message; results
come before any text there; no result without its ``tool_use``; the request does
not end with an assistant message, which newer models refuse as a prefill).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_openai.chat_models.base import _convert_message_to_dict

from clarigate.agent.models.local import LocalChatModel
from clarigate.agent.protocol import answer_message_text, answer_with_option


def openai_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """Why OpenAI's chat completions API would refuse these messages (empty when it accepts them)."""
    sent = [_convert_message_to_dict(m) for m in messages]
    problems: list[str] = []
    open_calls: list[str] | None = None  # ids still to be answered by the current run of tool messages
    for index, message in enumerate(sent):
        if message["role"] == "tool":
            if open_calls is None or message["tool_call_id"] not in open_calls:
                problems.append(f"message {index}: tool result {message['tool_call_id']} answers no call")
            else:
                open_calls.remove(message["tool_call_id"])
            continue
        if open_calls:
            problems.append(f"message {index}: calls {open_calls} have no result")
        is_assistant = message["role"] == "assistant"
        open_calls = [c["id"] for c in message.get("tool_calls", [])] if is_assistant else None
    if open_calls:
        problems.append(f"the end: calls {open_calls} have no result")
    return problems


def _anthropic_blocks(message: BaseMessage) -> tuple[str, list[dict[str, Any]]]:
    """The role and content blocks ``langchain_anthropic`` would send for one message."""
    if isinstance(message, ToolMessage):
        return "user", [{"type": "tool_result", "tool_use_id": message.tool_call_id}]
    if isinstance(message, HumanMessage):
        return "user", [{"type": "text", "text": message.text}]
    assert isinstance(message, AIMessage)
    if isinstance(message.content, str):
        blocks = [{"type": "text", "text": message.content}] if message.content else []
    else:
        blocks = [b for b in message.content if isinstance(b, dict)]
    present = {b.get("id") for b in blocks if b.get("type") == "tool_use"}
    # Tool calls missing from list content are added as tool_use blocks.
    blocks += [{"type": "tool_use", "id": c["id"]} for c in message.tool_calls if c["id"] not in present]
    return "assistant", blocks


def anthropic_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """Why Anthropic's messages API would refuse these messages (empty when it accepts them)."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            continue  # sent as the separate system parameter
        role, blocks = _anthropic_blocks(message)
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    problems: list[str] = []
    if turns and turns[-1][0] == "assistant" and not any(b.get("type") == "tool_use" for b in turns[-1][1]):
        problems.append("ends with an assistant message (a prefill, refused by newer models)")
    for index, (role, blocks) in enumerate(turns):
        if role != "assistant":
            continue
        uses = [b["id"] for b in blocks if b.get("type") == "tool_use"]
        following = turns[index + 1][1] if index + 1 < len(turns) else []
        results = [b["tool_use_id"] for b in following if b.get("type") == "tool_result"]
        if uses and sorted(results) != sorted(uses):
            problems.append(f"turn {index}: tool_use {uses} answered by tool_result {results}")
        kinds = [b.get("type") for b in following]
        if kinds[: len(results)] != ["tool_result"] * len(results):
            problems.append(f"turn {index + 1}: text before tool_result blocks")
    for index, (_role, blocks) in enumerate(turns):
        previous = turns[index - 1][1] if index else []
        uses = {b.get("id") for b in previous if b.get("type") == "tool_use"}
        for block in blocks:
            if block.get("type") == "tool_result" and block["tool_use_id"] not in uses:
                problems.append(f"turn {index}: tool_result {block['tool_use_id']} without its tool_use")
    return problems


class _AsksWithSiblings(LocalChatModel):
    """Asks together with other calls, shaped like ``shape`` ("openai" or "anthropic"); then replies."""

    shape: str = "openai"
    calls: list[list[BaseMessage]] = []

    @property
    def _llm_type(self) -> str:
        return "siblings"

    def observe(self, messages: list[BaseMessage]) -> None:
        self.calls.append(list(messages))

    def reply_to(self, messages: Sequence[BaseMessage]) -> AIMessage:
        if any(isinstance(m, AIMessage) for m in messages):
            return AIMessage(content="Done with your answer.")
        ask = {"question": "Which one?", "clarification_type": "approach_choice", "options": ["A", "B"]}
        calls = [
            {"name": "record_note", "args": {"note": "x"}, "id": "call_note", "type": "tool_call"},
            {"name": "ask_clarification", "args": ask, "id": "call_ask", "type": "tool_call"},
            {"name": "ask_clarification", "args": {"question": "Also?"}, "id": "call_ask2"},
        ]
        if self.shape == "openai":
            broken = {"name": "record_note", "args": '{"note": ', "id": "call_broken", "error": "bad json"}
            return AIMessage(
                content="", tool_calls=calls, invalid_tool_calls=[{**broken, "type": "invalid_tool_call"}]
            )
        content = [
            {"type": "text", "text": "Let me check first."},
            *({"type": "tool_use", "id": c["id"], "name": c["name"], "input": c["args"]} for c in calls),
            {"type": "tool_use", "id": "toolu_stray", "name": "record_note", "input": {}},
        ]
        return AIMessage(content=content, tool_calls=calls)


async def _ask_then_answer(make_agent: Any, recorder: Any, shape: str) -> _AsksWithSiblings:
    model = _AsksWithSiblings(shape=shape, calls=[])
    agent = await make_agent(model, tools=[recorder.tool])
    asked = await agent.run_turn("t1", "set it up")
    assert asked.request is not None and asked.request.tool_call_id == "call_ask"
    assert await agent.pending_request("t1") == asked.request
    # The stored thread itself is valid (the agent patches dangling calls only in what it sends).
    assert openai_problems(await agent.history("t1")) == []
    answer = answer_with_option(asked.request, "option-2", None)
    done = await agent.run_turn("t1", answer_message_text(asked.request, answer), answer)
    assert done.replies == ["Done with your answer."]
    assert recorder.ran == []
    return model


async def test_openai_request_after_sibling_and_broken_calls_is_valid(make_agent: Any, recorder: Any) -> None:
    model = await _ask_then_answer(make_agent, recorder, "openai")

    sent = model.calls[1]
    assert openai_problems(sent) == []
    tool_ids = [m.tool_call_id for m in sent if isinstance(m, ToolMessage)]
    assert sorted(tool_ids) == ["call_ask", "call_ask2", "call_broken", "call_note"]


async def test_anthropic_request_after_sibling_calls_is_valid(make_agent: Any, recorder: Any) -> None:
    model = await _ask_then_answer(make_agent, recorder, "anthropic")

    sent = model.calls[1]
    assert anthropic_problems(sent) == []
    assert openai_problems(sent) == []
    ai = next(m for m in sent if isinstance(m, AIMessage))
    assert ai.content[0] == {"type": "text", "text": "Let me check first."}  # the text is kept
    assert "toolu_stray" not in str(ai.content)


def test_the_checks_catch_what_providers_refuse() -> None:
    call = {"name": "record_note", "args": {}, "id": "c1", "type": "tool_call"}
    unanswered = [HumanMessage("hi"), AIMessage(content="", tool_calls=[call]), HumanMessage("again")]
    assert openai_problems(unanswered) and anthropic_problems(unanswered)
    orphan = [HumanMessage("hi"), AIMessage(content="ok"), ToolMessage(content="r", tool_call_id="c9")]
    assert openai_problems(orphan) and anthropic_problems(orphan)
    stray = AIMessage(
        content=[{"type": "tool_use", "id": "c1"}, {"type": "tool_use", "id": "c2"}], tool_calls=[call]
    )
    answered = ToolMessage(content="r", tool_call_id="c1")
    assert anthropic_problems([HumanMessage("hi"), stray, answered]) != []
    assert openai_problems([HumanMessage("hi"), stray, answered]) == []
    assert anthropic_problems([HumanMessage("hi"), AIMessage(content="Sure.")]) != []
