"""Typed interrupts and LangChain's review in process, through the gateway: a graph's own check of
the answer (``is_invalid_resume``) asks again, a new message over a typed question still runs, a
Cancel (or ``/cancel``) the graph's model refuses closes the question, never asks it again, and
an approval offers "Reply instead" (a ``respond`` decision) and shows the review's description."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.boundary.messages import AnswerStatus
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import typed_graphs, user_graphs

GOOD = {
    "name": "Ada",
    "guests": "4",
    "budget": "12.5",
    "vip": True,
    "color": "blue",
    "extras": ["red", "blue"],
    "day": "2026-12-01",
}

#: What the person who dismissed the typed question is told once its run is over: it cannot go on.
STOPPED = (
    "The task this question was part of has stopped: it cannot go on without an answer. "
    "Send a new message to start again."
)
#: ``/cancel``'s immediate reply on a graph's own interrupt: no promise to go on without the answer.
CANCELLED = "✖ Cancelled the question “Book the trip”."


@pytest.fixture(autouse=True)
def _fresh() -> None:
    typed_graphs.RESUMED.clear()
    typed_graphs.DELETED.clear()


async def _runner(graph: str) -> Any:
    return LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph=f"tests.agent.typed_graphs:{graph}")
    )


async def test_an_answer_the_graphs_model_rejects_is_asked_again_with_its_error(make_gateway) -> None:
    runner = await _runner("checked_booking")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-checked"), runner)
        await chat.say("book a trip")
        await gateway.drain(timeout=30)
        first = chat.last_request().request
        assert first.fields[1].default == 2  # Guests: the schema's default
        await chat.submit({**GOOD, "name": "Ada1", "guests": ""})  # a digit: only the graph knows
        await gateway.drain(timeout=30)
        again = chat.last_request().request
        assert again.request_id == first.request_id + "#1"
        assert "The answer was not accepted: Name: Value error, a name has no digits" in (again.context or "")
        assert again.fields[0].default == "Ada1"  # filled in as the person left it
        assert again.fields[1].default is None  # emptied, so empty: not the default again
        assert typed_graphs.RESUMED == []

        await chat.submit({**GOOD, "name": "Ada"})
        await gateway.drain(timeout=30)
        [booking] = typed_graphs.RESUMED
        assert isinstance(booking, typed_graphs.CheckedBooking)
        assert (booking.guests, booking.budget, booking.color) == (4, 12.5, typed_graphs.Color.blue)
        assert chat.texts()[-1] == "Booked for Ada."
    finally:
        await runner.aclose()


async def test_a_new_message_over_a_typed_question_still_runs(make_gateway) -> None:
    runner = await _runner("checked_booking")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-superseded"), runner)
        await chat.say("book a trip")
        await gateway.drain(timeout=30)
        await chat.say("actually, something else")  # the model refuses a declined answer
        await gateway.drain(timeout=30)
        assert len(chat.requests()) == 2  # the graph ran the new message (and asks again)
        assert not [e for e in chat.of_kind("error")]
    finally:
        await runner.aclose()


async def test_the_cancel_command_on_a_question_the_graph_goes_on_without_says_so(make_gateway) -> None:
    runner = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:free_text")
    )
    try:
        gateway, chat = await make_gateway(MemoryStore("interrupt-cancel-command"), runner)
        await chat.say("release it")
        await gateway.drain(timeout=30)
        await chat.say("/cancel")
        await gateway.drain(timeout=30)
        # the command's reply promises nothing; the graph took the declined answer: no "stopped"
        assert chat.texts() == [
            "✖ Cancelled the question “Type the release name”.",
            f"Release {user_graphs.ANSWERS[-1]}.",
        ]
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        assert await runner.pending_request(thread_id) is None
    finally:
        await runner.aclose()


async def test_reply_instead_answers_the_call_with_the_message_and_the_description_is_shown(
    make_gateway,
) -> None:
    runner = await _runner("make_reviewed_agent")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-respond"), runner)
        await chat.say("clear the users table")
        await gateway.drain(timeout=30)
        request = chat.last_request().request
        assert (request.context or "").startswith("Dropping rows cannot be undone.\n`drop_rows(")
        labels = [o.label for o in request.options]
        assert labels == ["Approve", "Reject", "Reply instead"]
        await chat.click(labels.index("Reply instead"))
        await gateway.drain(timeout=30)
        asked = chat.last_request().request
        assert asked.request_id.startswith("approval-respond:")
        await chat.answer_text("The table is already empty.")
        await gateway.drain(timeout=30)
        assert typed_graphs.DELETED == []  # the tool never ran
        assert chat.texts()[-1] == "Noted."
        thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
        results = [m for m in await runner._agent.history(thread_id) if m.type == "tool"]
        assert [(m.text, m.status) for m in results] == [("The table is already empty.", "success")]
    finally:
        await runner.aclose()


async def _cancelled_then_a_new_message_runs(
    gateway: Any, chat: Any, runner: Any, cancel: Any, said: list[str]
) -> None:
    """Ask the typed question, dismiss it with ``cancel()`` (whose graph's model refuses the declined
    answer): the question is closed, never asked again, nothing fails, the person is told ``said``
    (the task stopped), and the thread no longer reports it as open; the next message runs."""
    await chat.say("book a trip")
    await gateway.drain(timeout=30)
    [asked] = chat.requests()
    thread_id = await gateway.store.thread_for_chat(chat.conversation().thread_key, 3600)
    assert (await runner.pending_request(thread_id)).request_id == asked.request.request_id
    await cancel()
    await gateway.drain(timeout=30)
    assert chat.requests() == [asked]  # not asked again: the person is not trapped
    assert not chat.of_kind("error")
    assert chat.texts() == said  # never "I will go on without the answer": it cannot
    assert typed_graphs.RESUMED == []
    snapshot = await runner._agent._graph.aget_state({"configurable": {"thread_id": thread_id}})
    assert [i.id for i in snapshot.interrupts] == [asked.request.request_id.split(":", 1)[1]]
    assert await runner.pending_request(thread_id) is None  # ``clarigate chat`` does not bring it back

    await chat.say("book a trip for Ada")  # runs as any new message over an open interrupt does
    await gateway.drain(timeout=30)
    again = chat.last_request().request
    assert again.request_id != asked.request.request_id and not chat.of_kind("error")
    await chat.submit(GOOD)
    await gateway.drain(timeout=30)
    assert chat.texts()[-1] == "Booked for Ada."


async def test_cancel_on_a_typed_question_whose_model_refuses_the_decline_closes_it(make_gateway) -> None:
    runner = await _runner("checked_booking")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-cancel"), runner)
        outcomes: list[Any] = []

        async def click_cancel() -> None:
            outcomes.append(await chat.cancel())

        # the question's message says it was cancelled; the run's line, that the task stopped
        await _cancelled_then_a_new_message_runs(gateway, chat, runner, click_cancel, [STOPPED])
        [outcome] = outcomes
        assert outcome.status is AnswerStatus.ACCEPTED
        assert outcome.answered_line == outcome.message == "✖ Cancelled by u1"  # the question's message
    finally:
        await runner.aclose()


async def test_the_cancel_command_on_a_typed_question_whose_model_refuses_the_decline_closes_it(
    make_gateway,
) -> None:
    runner = await _runner("checked_booking")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-cancel-command"), runner)

        async def command() -> None:
            await chat.say("/cancel")

        # the command's reply at once, then the run's line: the task stopped
        await _cancelled_then_a_new_message_runs(gateway, chat, runner, command, [CANCELLED, STOPPED])
        assert [c.answered_line for c in chat.closed()] == ["✖ Cancelled by u1"]
    finally:
        await runner.aclose()


async def test_quxiao_on_an_english_typed_question_says_the_task_stopped_in_chinese(make_gateway) -> None:
    """``/取消`` is Chinese: the command's reply and the follow-up run's "the task stopped" are too."""
    runner = await _runner("checked_booking")
    try:
        gateway, chat = await make_gateway(MemoryStore("typed-quxiao-command"), runner)

        async def command() -> None:
            await chat.say("/取消")

        said = [
            "✖ 已取消问题「Book the trip」。",
            "这个问题所属的任务已停止：没有答案无法继续。如需重新开始，请发送新消息。",
        ]
        await _cancelled_then_a_new_message_runs(gateway, chat, runner, command, said)
    finally:
        await runner.aclose()
