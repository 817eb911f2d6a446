"""A checkpoint that cannot be written (the database went away mid-run) stops the run before its
next step, and the retry goes on from what was kept: a tool whose call was not recorded never ran,
so it runs once, and the thread's history keeps every answer the person was sent.

Seen in the cluster experiment (bench/cluster_faults.py) with PostgreSQL killed mid-run. The
checkpoint recording a tool call was still being written while the tool ran: the write failed, the
run went on to its end and only then raised, and its retry, from the last checkpoint written, asked
the model again and ran the tool a second time. And a retry finding the answer's step kept as
pending writes (the step's checkpoint lost) sent the answer without recording it: the thread's next
message started from the step before, and the answer was missing from the history.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage

from .conftest import scripted

NOTE = {"name": "record_note", "args": {"note": "{last_user}"}}


def _last_message(checkpoint: dict[str, Any]) -> Any:
    messages = checkpoint.get("channel_values", {}).get("messages") or []
    return messages[-1] if messages else None


def _gone_once(agent: Any, when: Callable[[Any], bool]) -> list[str]:
    """The checkpointer fails (connection lost) the first time it writes a checkpoint whose last
    message matches ``when``; the list it returns says when it did."""
    saver = agent._checkpointer.saver
    written = saver.aput
    failed: list[str] = []

    async def database_gone_once(config: Any, checkpoint: Any, *args: Any) -> Any:
        if not failed and when(_last_message(checkpoint)):
            failed.append("gone")
            raise ConnectionError("the database went away")
        return await written(config, checkpoint, *args)

    saver.aput = database_gone_once
    return failed


def _calls_a_tool(message: Any) -> bool:
    return isinstance(message, AIMessage) and bool(message.tool_calls)


def _answers(message: Any) -> bool:
    return isinstance(message, AIMessage) and not message.tool_calls


async def _history(agent: Any) -> list[str]:
    snapshot = await agent._graph.aget_state({"configurable": {"thread_id": "t"}})
    return [f"{type(m).__name__}: {m.text}" for m in snapshot.values["messages"]]


async def test_a_tool_call_whose_checkpoint_was_not_written_runs_once(make_agent, recorder):
    model = scripted({"tool_calls": [NOTE]}, {"content": "Noted."})
    agent = await make_agent(model, [recorder.tool])
    failed = _gone_once(agent, _calls_a_tool)

    with pytest.raises(ConnectionError):  # the gateway keeps the message and tries again
        await agent.run_turn("t", "buy milk", turn_id="m1")
    assert failed and recorder.ran == []  # stopped before the tool started
    output = await agent.run_turn("t", "buy milk", turn_id="m1")

    assert recorder.ran == ["buy milk"]
    assert output.replies == ["Noted."]
    assert await _history(agent) == [
        "HumanMessage: buy milk",
        "AIMessage: ",
        "ToolMessage: noted: buy milk",
        "AIMessage: Noted.",
    ]


async def test_an_answer_whose_checkpoint_was_not_written_stays_in_the_history(make_agent, recorder):
    model = scripted({"content": "First answer."}, {"content": "Second answer."})
    agent = await make_agent(model, [recorder.tool])
    failed = _gone_once(agent, _answers)

    with pytest.raises(ConnectionError):
        await agent.run_turn("t", "one", turn_id="m1")
    retried = await agent.run_turn("t", "one", turn_id="m1")
    second = await agent.run_turn("t", "two", turn_id="m2")

    assert failed
    assert (retried.replies, second.replies) == (["First answer."], ["Second answer."])
    assert await _history(agent) == [
        "HumanMessage: one",
        "AIMessage: First answer.",
        "HumanMessage: two",
        "AIMessage: Second answer.",
    ]
