"""An approval of one's own graph whose review allows no ``reject`` (LangChain's
``allowed_decisions``): no decision the person did not make is sent, and nobody is trapped.

Approve and Edit only: a new message or a Cancel leaves it open, saying it can only be answered
(or left with /new), and it still answers; in a shared conversation someone else's message is
told, in a note for them only, that only the asker can answer it, and it stays the asker's.
Approve and Reply instead: a new message turns the call down with ``respond`` and runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, ClassVar

import pytest
from langchain_core.messages import ToolMessage

from clarigate.adapters.testing import TestAdapter
from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import catalog
from clarigate.gateway.boundary.messages import AnswerStatus, Sender, TextReply
from clarigate.gateway.runners.base import RunInput
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.base import Store
from clarigate.gateway.store.memory import MemoryStore
from tests.gateway.runners import review_graphs

GRAPHS = "tests.gateway.runners.review_graphs"
ROOM = {"chat": "room", "topic": "t", "direct": False}


@pytest.fixture
async def edit_only() -> AsyncIterator[LangGraphRunner]:
    review_graphs.RAN.clear()
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph=f"{GRAPHS}:make_approve_or_edit_agent")
    )
    yield runner
    await runner.aclose()


@pytest.mark.parametrize(
    ("first", "instead", "locale"),
    [
        ("deploy please", "wait, what is the current version?", "en"),
        ("请部署", "等等，现在是哪个版本？", "zh"),
    ],
)
async def test_a_new_message_leaves_it_open_and_it_still_answers(
    make_gateway: Any, edit_only: LangGraphRunner, first: str, instead: str, locale: str
) -> None:
    gateway, chat = await make_gateway(MemoryStore("no-reject"), edit_only)
    await chat.say(first)
    await gateway.drain()
    asked = chat.last_request().request
    assert [o.id for o in asked.options] == ["option-1", "option-2"]  # Approve, Edit
    await chat.reply(instead)
    await gateway.drain()
    assert chat.texts() == [catalog.text("approval_answer_first", locale, new="/new")]
    assert not chat.closed() and review_graphs.RAN == []  # nothing ran, nothing failed
    assert chat.last_request().request.request_id == asked.request_id
    await chat.reply(catalog.text("approve", locale))  # typed: the go-ahead asks to be confirmed
    await chat.reply("confirm" if locale == "en" else "确认")
    await gateway.drain()
    assert review_graphs.RAN == ["eu-west"]
    assert chat.texts()[-1].startswith("You said: ")


async def test_a_cancel_is_refused_and_new_leaves_it(make_gateway: Any, edit_only: LangGraphRunner) -> None:
    gateway, chat = await make_gateway(MemoryStore("no-reject-cancel"), edit_only)
    await chat.say("deploy please")
    await gateway.drain()
    asked = chat.last_request().request
    outcome = await chat.cancel()
    assert outcome.status == AnswerStatus.INVALID
    assert outcome.message == catalog.text("approval_answer_first", new="/new")
    await chat.reply("/cancel")
    await gateway.drain()
    assert chat.texts()[-1] == catalog.text("approval_answer_first", new="/new")
    assert not chat.closed() and review_graphs.RAN == []
    await chat.reply("/new")  # the way out, always: it closes the approval, nothing runs
    await gateway.drain()
    assert chat.closed() and review_graphs.RAN == []
    assert [r.request.request_id for r in chat.requests()] == [asked.request_id]  # never asked again


@pytest.mark.parametrize(
    ("words", "locale"), [("what is the current version?", "en"), ("现在是哪个版本？", "zh")]
)
async def test_someone_elses_message_is_told_only_the_asker_can_answer(
    store: Store, make_gateway: Any, edit_only: LangGraphRunner, words: str, locale: str
) -> None:
    gateway, chat = await make_gateway(store, edit_only)
    await chat.say("deploy please", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    asked = chat.last_request()
    await chat.say(words, user="bob", name="Bob", **ROOM)
    await gateway.drain()
    note = chat.sent[-1][1]
    assert isinstance(note, TextReply) and note.private_to == Sender(user_id="bob", display_name="Bob")
    assert note.text == catalog.text("approval_only_asker", locale, who="Ann", new="/new")
    assert (await gateway.pending_by_token(asked.token)).status == "pending" and not chat.closed()
    record = await store.get_pending(asked.request.request_id)
    assert record is not None and review_graphs.RAN == []
    agent = await edit_only._get()
    state = await agent._graph.aget_state({"configurable": {"thread_id": record.thread_id}})
    assert words not in [m.text for m in state.values["messages"]]  # the agent never read it
    await chat.click(0, user="ann", token=asked.token)  # Approve: still Ann's to answer
    await gateway.drain()
    assert review_graphs.RAN == ["eu-west"] and chat.texts()[-1] == "You said: deploy please"


async def test_where_anyone_may_answer_anyone_is_told_to_answer_it(
    make_gateway: Any, edit_only: LangGraphRunner
) -> None:
    gateway, chat = await make_gateway(MemoryStore("no-reject-anyone"), edit_only, answer_policy="anyone")
    await chat.say("deploy please", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    await chat.say("what is the current version?", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    assert chat.texts()[-1] == catalog.text("approval_answer_first", new="/new")
    assert chat.sent[-1][1].private_to is None and review_graphs.RAN == []


class SlashCommandAdapter(TestAdapter):
    """A platform whose commands are typed as ``/clarigate new`` (Slack's slash command)."""

    command_syntax: ClassVar[str] = "/clarigate {command}"


async def test_the_way_out_is_spelled_as_the_platform_types_it(
    make_gateway: Any, edit_only: LangGraphRunner
) -> None:
    gateway, chat = await make_gateway(
        MemoryStore("no-reject-slash"), edit_only, adapter_class=SlashCommandAdapter
    )
    await chat.say("deploy please")
    await gateway.drain()
    outcome = await chat.cancel()  # the Cancel button: its refusal
    await chat.reply("what version is live?")  # a new message over it
    await gateway.drain()
    await chat.reply("/cancel")
    await gateway.drain()
    said = [outcome.message, *chat.texts()]
    assert said == [catalog.text("approval_answer_first", new="/clarigate new")] * 3
    assert "/new " not in said[0]


async def test_the_runner_asks_again_when_nobody_held_it_open(edit_only: LangGraphRunner) -> None:
    """An approval the gateway no longer holds (it expired): a new message asks it again, saying
    why, and does not run; a Cancel that reaches the agent does the same. Nothing is rejected."""
    asked = (await edit_only.run_turn(RunInput(thread_id="t", text="deploy please"))).request
    assert asked is not None
    again = await edit_only.run_turn(RunInput(thread_id="t", text="hello"))
    assert again.request is not None and again.request.request_id == f"{asked.request_id}#1"
    assert catalog.text("approval_answer_first", new="/new") in (again.request.context or "")
    assert again.replies == [] and review_graphs.RAN == []
    agent = await edit_only._get()
    messages = (await agent._graph.aget_state({"configurable": {"thread_id": "t"}})).values["messages"]
    assert "hello" not in [m.text for m in messages]


async def test_respond_stands_for_a_new_message_where_reject_is_not_allowed(make_gateway: Any) -> None:
    review_graphs.RAN.clear()
    graph = f"{GRAPHS}:make_approve_or_respond_agent"
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=graph))
    try:
        store = MemoryStore("respond-only")
        gateway, chat = await make_gateway(store, runner)
        await chat.say("deploy please")
        await gateway.drain()
        asked = chat.last_request().request
        assert asked.dismissible is None
        record = await store.get_pending(asked.request_id)
        assert record is not None
        await chat.reply("what is the current version?")
        await gateway.drain()
        assert chat.closed() and chat.texts()[-1] == "You said: what is the current version?"
        assert review_graphs.RAN == []
        agent = await runner._get()
        state = await agent._graph.aget_state({"configurable": {"thread_id": record.thread_id}})
        (result,) = [m for m in state.values["messages"] if isinstance(m, ToolMessage)]
        assert result.text == catalog.text("approval_superseded")
    finally:
        await runner.aclose()
