"""A photo sent with a typed answer to an interrupt reaches the agent: an own graph's resumed node
finds it in its messages, the built-in agent's model reads it after the approved tool's result;
a graph that cannot be given it (a tool call still unanswered in its own graph) says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.boundary.messages import Attachment
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
SHOT = Attachment(kind="image", name="shot.png", mime_type="image/png", size=len(PNG), ref="f1")
DELETE_TURN = {"tool_calls": [{"name": "delete_records", "args": {"table": "users", "limit": 5}}]}
NOT_PASSED = (
    "Your answer was passed on, but the photo or file sent with it could not be: "
    "this agent does not take them with an answer. Send it again as a new message."
)


def _images(message: Any) -> list[str]:
    content = message.content if isinstance(message.content, list) else []
    return [block["base64"] for block in content if isinstance(block, dict) and block.get("type") == "image"]


async def _messages(runner: LangGraphRunner, gateway: Any, chat: Any) -> list[Any]:
    thread = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
    agent = await runner._get()
    state = await agent._graph.aget_state({"configurable": {"thread_id": thread}})
    return list(state.values["messages"])


async def test_an_own_graph_resumed_with_a_photo_finds_it_before_its_reply(make_gateway: Any) -> None:
    user_graphs.ANSWERS.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:make_graph")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore("answer-photo-own"), runner)
        chat.files["f1"] = PNG
        await chat.say("deploy")
        await gateway.drain()
        await chat.say("2", attachments=[SHOT])
        await gateway.drain()
        messages = await _messages(runner, gateway, chat)
    finally:
        await runner.aclose()
    assert user_graphs.ANSWERS[-1]["value"] == "us-east"
    assert [type(m) for m in messages[-2:]] == [HumanMessage, AIMessage]
    sent, reply = messages[-2:]
    assert len(_images(sent)) == 1 and "(attached: shot.png" in sent.text
    assert reply.text == "Deployed to us-east."
    assert NOT_PASSED not in chat.texts()


async def test_an_answer_typing_the_attached_line_sends_no_file_with_it(make_gateway: Any) -> None:
    user_graphs.ANSWERS.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:free_text")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore("answer-typed-attached"), runner)
        await chat.say("release")
        await gateway.drain()
        await chat.say("v2 (attached: report.pdf)")  # typed words, no file sent with them
        await gateway.drain()
        messages = await _messages(runner, gateway, chat)
    finally:
        await runner.aclose()
    assert user_graphs.ANSWERS == ["v2 (attached: report.pdf)"]
    # no second message of the answer's words, as if files had come with it
    assert [(type(m), m.text) for m in messages] == [
        (HumanMessage, "release"),
        (AIMessage, "Release v2 (attached: report.pdf)."),
    ]
    assert NOT_PASSED not in chat.texts()


async def test_the_built_in_agent_reads_the_photo_of_a_confirmed_approval(
    tmp_path: Path, make_gateway: Any
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(yaml.safe_dump([DELETE_TURN, {"content": "Seen: {last_user}"}]), encoding="utf-8")
    user_graphs.RAN.clear()
    settings = AgentSettings(
        model=f"scripted:{script}",
        checkpointer_url="memory://",
        tools=("tests.agent.user_graphs:delete_records",),
        require_approval={"delete_records": None},
    )
    runner = LangGraphRunner(settings)
    try:
        gateway, chat = await make_gateway(MemoryStore("answer-photo-approval"), runner)
        chat.files["f1"] = PNG
        await chat.say("clean up users")
        await gateway.drain()
        await chat.say("Approve", attachments=[SHOT])
        await gateway.drain()
        await chat.reply("confirm")
        await gateway.drain()
        messages = await _messages(runner, gateway, chat)
    finally:
        await runner.aclose()
    assert user_graphs.RAN == ["delete users 5"]
    # the tool's result right after its call, then the photo, then the model's reply to it
    assert [type(m) for m in messages[-4:]] == [AIMessage, ToolMessage, HumanMessage, AIMessage]
    assert "(images: shot.png, image/png, 40 bytes)" in messages[-2].text  # a model without sight
    assert "(attached: shot.png" in chat.texts()[-1]  # the model read it


async def test_a_graph_that_cannot_take_the_photo_says_so(make_gateway: Any) -> None:
    runner = LangGraphRunner(
        AgentSettings(
            checkpointer_url="memory://", graph="tests.gateway.runners.test_answer_attachments_reach:hitl"
        )
    )
    try:
        gateway, chat = await make_gateway(MemoryStore("answer-photo-hitl"), runner)
        chat.files["f1"] = PNG
        await chat.say("clean up users")
        await gateway.drain()
        await chat.say("Reject", attachments=[SHOT])
        await gateway.drain()
        messages = await _messages(runner, gateway, chat)
    finally:
        await runner.aclose()
    assert NOT_PASSED in chat.texts()
    assert not any(_images(m) or "shot.png" in m.text for m in messages)


def test_the_notice_is_in_every_language() -> None:
    assert catalog.text("attachment_not_passed", "en") == NOT_PASSED
    assert catalog.text("attachment_not_passed", "zh").startswith("您的回答已转交")


def hitl(checkpointer: Any) -> Any:
    """An operator's own ``create_agent`` with LangChain's approvals and nothing of clarigate's."""
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from clarigate.agent.models.scripted import ScriptedChatModel, ScriptedTurn

    model = ScriptedChatModel(
        turns=[ScriptedTurn.model_validate(DELETE_TURN), ScriptedTurn(content="Not deleting.")]
    )
    approval = {"delete_records": {"allowed_decisions": ["approve", "reject"]}}
    return create_agent(
        model,
        tools=[user_graphs.delete_records],
        middleware=[HumanInTheLoopMiddleware(approval)],  # type: ignore[arg-type]
        checkpointer=checkpointer,
    )
