"""An approval of one's own graph whose review allows no ``reject`` (LangChain's
``allowed_decisions``): no decision the person did not make is sent, and it never holds the
conversation.

Approve and Edit only: a Cancel, ``/cancel`` or a new message turns the call down all the same,
without a decision the middleware would refuse: the call is answered saying why (the graph's step
never resumed: the tool does not run) and the run goes on; in a shared conversation someone
else's message runs over it as over any approval. Approve and Reply instead: a new message turns
the call down with ``respond`` and runs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings
from clarigate.agent.protocol import answer_declined, catalog
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.boundary.outbound_items import TextReply
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


async def _results(runner: LangGraphRunner, thread_id: str) -> list[str]:
    """What the model read as the tool calls' results on ``thread_id``."""
    agent = await runner._get()
    state = await agent._graph.aget_state({"configurable": {"thread_id": thread_id}})
    return [m.text for m in state.values["messages"] if isinstance(m, ToolMessage)]


@pytest.mark.parametrize(
    ("first", "instead", "locale"),
    [
        ("deploy please", "wait, what is the current version?", "en"),
        ("请部署", "等等，现在是哪个版本？", "zh"),
    ],
)
async def test_a_new_message_turns_it_down_and_runs(
    make_gateway: Any, edit_only: LangGraphRunner, first: str, instead: str, locale: str
) -> None:
    store = MemoryStore(f"no-reject-{locale}")
    gateway, chat = await make_gateway(store, edit_only)
    await chat.say(first)
    await gateway.drain()
    asked = chat.last_request().request
    assert [o.id for o in asked.options] == ["option-1", "option-2"]  # Approve, Edit
    assert chat.buttons()[-1] == catalog.text("cancel", locale)  # it can be dismissed
    record = await store.get_pending(asked.request_id)
    assert record is not None
    await chat.reply(instead)
    await gateway.drain()
    assert chat.closed() and review_graphs.RAN == []  # closed, and nothing ran
    assert chat.texts()[-1] == f"You said: {instead}"
    assert await _results(edit_only, record.thread_id) == [catalog.text("approval_superseded", locale)]


@pytest.mark.parametrize("how", ["button", "command"])
async def test_a_cancel_turns_it_down_and_the_agent_goes_on(
    make_gateway: Any, edit_only: LangGraphRunner, how: str
) -> None:
    store = MemoryStore(f"no-reject-cancel-{how}")
    gateway, chat = await make_gateway(store, edit_only)
    await chat.say("deploy please")
    await gateway.drain()
    asked = chat.last_request().request
    record = await store.get_pending(asked.request_id)
    assert record is not None
    if how == "button":
        assert (await chat.cancel()).status == AnswerStatus.ACCEPTED
    else:
        await chat.reply("/cancel")
    await gateway.drain()
    assert review_graphs.RAN == []
    assert await _results(edit_only, record.thread_id) == [catalog.text("approval_declined")]
    assert chat.texts()[-1] == "You said: deploy please"  # the model read why, and answered
    assert [r.request.request_id for r in chat.requests()] == [asked.request_id]  # never asked again


async def test_a_cancel_of_its_edit_form_turns_it_down_too(
    make_gateway: Any, edit_only: LangGraphRunner
) -> None:
    gateway, chat = await make_gateway(MemoryStore("no-reject-edit-cancel"), edit_only)
    await chat.say("deploy please")
    await gateway.drain()
    await chat.click(1)  # Edit: the arguments form
    await gateway.drain()
    form = chat.last_request().request
    assert form.input_mode == "form" and chat.buttons()[-1] == catalog.text("cancel")
    assert (await chat.cancel()).status == AnswerStatus.ACCEPTED
    await gateway.drain()
    assert review_graphs.RAN == [] and chat.texts()[-1] == "You said: deploy please"


async def test_someone_elses_message_runs_over_it(
    store: Store, make_gateway: Any, edit_only: LangGraphRunner
) -> None:
    gateway, chat = await make_gateway(store, edit_only)
    await chat.say("deploy please", user="ann", name="Ann", **ROOM)
    await gateway.drain()
    asked = chat.last_request()
    record = await store.get_pending(asked.request.request_id)
    assert record is not None
    await chat.say("what is the current version?", user="bob", name="Bob", **ROOM)
    await gateway.drain()
    assert not [item for _, item in chat.sent if isinstance(item, TextReply) and item.private_to]
    assert chat.closed() and review_graphs.RAN == []  # closed for everyone; nobody approved it
    assert (await gateway.pending_by_token(asked.token)).status != "pending"
    assert chat.texts()[-1].endswith("what is the current version?")  # Bob's request was answered
    assert await _results(edit_only, record.thread_id) == [catalog.text("approval_superseded")]


async def test_the_runner_turns_it_down_when_nobody_holds_it(edit_only: LangGraphRunner) -> None:
    """An approval the gateway no longer holds (it expired): a new message turns it down and runs;
    so does a Cancel that reaches the agent, on another thread. The tool never runs."""
    asked = (await edit_only.run_turn(RunInput(thread_id="t", text="deploy please"))).request
    assert asked is not None
    said = await edit_only.run_turn(RunInput(thread_id="t", text="hello"))
    assert said.request is None and said.replies == ["You said: hello"]
    assert await _results(edit_only, "t") == [catalog.text("approval_superseded")]
    again = (await edit_only.run_turn(RunInput(thread_id="u", text="deploy please"))).request
    assert again is not None
    response = answer_declined(again, None, "cancelled")
    went_on = await edit_only.run_turn(RunInput(thread_id="u", text="", response=response))
    assert went_on.replies == ["You said: deploy please"] and not went_on.dismissed
    assert await _results(edit_only, "u") == [catalog.text("approval_declined")]
    assert review_graphs.RAN == []


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
        record = await store.get_pending(asked.request_id)
        assert record is not None
        await chat.reply("what is the current version?")
        await gateway.drain()
        assert chat.closed() and chat.texts()[-1] == "You said: what is the current version?"
        assert review_graphs.RAN == []
        assert await _results(runner, record.thread_id) == [catalog.text("approval_superseded")]
    finally:
        await runner.aclose()


async def _ask_and_cancel(graph: str) -> tuple[LangGraphRunner, Any]:
    """A runner on ``graph``, asked to deploy, then its approval cancelled: the turn's output."""
    review_graphs.RAN.clear()
    runner = LangGraphRunner(AgentSettings(checkpointer_url="memory://", graph=f"{GRAPHS}:{graph}"))
    asked = (await runner.run_turn(RunInput(thread_id="t", text="deploy please"))).request
    assert asked is not None and [o.label for o in asked.options] == ["Approve", "Edit"]
    response = answer_declined(asked, None, "cancelled")
    return runner, await runner.run_turn(RunInput(thread_id="t", text="", response=response))


@pytest.mark.parametrize("graph", ["make_deploy_and_lookup_agent", "make_per_call_deploy_and_lookup_agent"])
async def test_a_call_nobody_reviews_still_runs_once_beside_the_one_turned_down(graph: str) -> None:
    """``lookup`` needs no approval: it runs (once, per call: before the approval was asked), and
    its result is kept; ``deploy`` never runs."""
    runner, went_on = await _ask_and_cancel(graph)
    try:
        assert went_on.replies == ["You said: deploy please"]
        assert review_graphs.RAN == ["lookup version"]
        declined = catalog.text("approval_declined")
        assert sorted(await _results(runner, "t")) == sorted([declined, "found version"])
    finally:
        await runner.aclose()


async def test_an_approval_in_a_node_of_ones_own_is_closed_and_never_runs() -> None:
    """Its calls are not in the graph's own messages, so no update can answer them: the question
    is closed as dismissed (the task stopped), nothing is resumed, and the tool never runs."""
    runner, went_on = await _ask_and_cancel("make_nested_approval_graph")
    try:
        assert went_on.dismissed and went_on.replies == [] and review_graphs.RAN == []
        assert await runner.pending_request("t") is None  # no longer shown as waiting
    finally:
        await runner.aclose()
