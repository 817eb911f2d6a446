"""An approved tool runs at most once across crashes: the replica that takes the answer's job over
goes on from the recorded decision, never asks again, and starts the tool again only when it is
declared idempotent (``agent.idempotent_tools``)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent, TurnOutput
from clarigate.agent.models.scripted import ScriptedChatModel
from clarigate.agent.protocol import answer_message_text, answer_with_option, catalog

from .conftest import scripted


class BlockingDelete:
    """A ``delete_records`` tool that blocks until released, counting every start."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self.running = asyncio.Event()
        self.release = asyncio.Event()

        @tool
        async def delete_records(table: str) -> str:
            """Delete every record of ``table``."""
            self.started.append(table)
            self.running.set()
            await self.release.wait()
            return f"deleted {table}"

        self.tool = delete_records


def _model() -> ScriptedChatModel:
    call = {"name": "delete_records", "args": {"table": "{last_user}"}}
    return scripted({"tool_calls": [call]}, {"content": "Finished."})


async def _replica(
    db: Path, tool: Any, idempotent: tuple[str, ...] = (), approval: bool = True
) -> tuple[ClarifyingAgent, Any]:
    settings = AgentSettings(
        checkpointer_url=f"sqlite:///{db}",
        require_approval={"delete_records": ["approve", "reject"]} if approval else {},
        idempotent_tools=idempotent,
    )
    model = _model()
    return await ClarifyingAgent.create(settings, model=model, tools=[tool]), model


async def _approve_then_crash(db: Path, delete: BlockingDelete, idempotent: tuple[str, ...]) -> Any:
    """Ask, approve, and kill the run while the tool runs; the answer's job, as a replica re-runs it."""
    first, _ = await _replica(db, delete.tool, idempotent)
    asked = await first.run_turn("t", "users", turn_id="message-1")
    assert asked.request is not None
    approve = answer_with_option(asked.request, asked.request.options[0].id, None)
    job = {"text": answer_message_text(asked.request, approve), "response": approve}
    running = asyncio.create_task(first.run_turn("t", **job, turn_id="answer-1"))
    await delete.running.wait()
    running.cancel()  # the replica dies in the middle of the tool
    with pytest.raises(asyncio.CancelledError):
        await running
    await first.aclose()
    return job


async def test_a_takeover_after_a_crash_mid_tool_neither_asks_again_nor_runs_it_twice(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    delete = BlockingDelete()
    job = await _approve_then_crash(tmp_path / "c.db", delete, idempotent=())
    second, model = await _replica(tmp_path / "c.db", delete.tool)
    delete.release.set()
    try:
        with caplog.at_level(logging.WARNING, logger="clarigate.agent.takeover"):
            out: TurnOutput = await second.run_turn("t", **job, turn_id="answer-1")
        history = await second.history("t")
    finally:
        await second.aclose()

    assert out.request is None and out.replies == ["Finished."]  # not asked again; the run went on
    assert delete.started == ["users"]  # started once
    (result,) = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
    assert result.text == catalog.text("call_cut_by_restart", "en", name="delete_records")
    assert result.status == "error"
    assert [m.type for m in history].count("human") == 1  # the answer was not sent as a new message
    assert "delete_records" in caplog.text and "not run again" in caplog.text


async def test_a_takeover_runs_an_idempotent_tool_again_and_completes(tmp_path: Path) -> None:
    delete = BlockingDelete()
    job = await _approve_then_crash(tmp_path / "c.db", delete, idempotent=("delete_records",))
    second, model = await _replica(tmp_path / "c.db", delete.tool, idempotent=("delete_records",))
    delete.release.set()
    try:
        out = await second.run_turn("t", **job, turn_id="answer-1")
    finally:
        await second.aclose()

    assert out.request is None and out.replies == ["Finished."]
    assert delete.started == ["users", "users"]  # declared safe to run twice: it ran again
    (result,) = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
    assert result.text == "deleted users"


async def test_a_tool_cut_off_in_a_turn_without_approval_is_not_started_again(tmp_path: Path) -> None:
    delete = BlockingDelete()
    first, _ = await _replica(tmp_path / "c.db", delete.tool, approval=False)
    running = asyncio.create_task(first.run_turn("t", "users", turn_id="message-1"))
    await delete.running.wait()
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await running
    await first.aclose()
    second, model = await _replica(tmp_path / "c.db", delete.tool, approval=False)
    try:
        out = await second.run_turn("t", "users", turn_id="message-1")  # the job, taken over
    finally:
        await second.aclose()

    assert out.replies == ["Finished."] and delete.started == ["users"]
    (result,) = [m for m in model.calls[-1] if isinstance(m, ToolMessage)]
    assert result.text == catalog.text("call_cut_by_restart", "en", name="delete_records")


async def test_an_approved_run_that_ended_before_its_reply_was_sent_is_not_run_again(tmp_path: Path) -> None:
    delete = BlockingDelete()
    delete.release.set()
    first, _ = await _replica(tmp_path / "c.db", delete.tool)
    try:
        asked = await first.run_turn("t", "users", turn_id="message-1")
        approve = answer_with_option(asked.request, asked.request.options[0].id, None)
        job = {"text": answer_message_text(asked.request, approve), "response": approve}
        assert (await first.run_turn("t", **job, turn_id="answer-1")).replies == ["Finished."]
    finally:
        await first.aclose()  # the replica dies before it sends the reply
    second, model = await _replica(tmp_path / "c.db", delete.tool)
    try:
        out = await second.run_turn("t", **job, turn_id="answer-1")  # the job, taken over
        history = await second.history("t")
    finally:
        await second.aclose()

    assert out.request is None and out.replies == ["Finished."]  # read from the checkpoint
    assert not model.calls and delete.started == ["users"]  # nothing ran again
    assert [m.type for m in history].count("human") == 1


def test_idempotent_tools_from_the_environment() -> None:
    settings = AgentSettings.from_env({"AGENT_IDEMPOTENT_TOOLS": "lookup, get_weather"})
    assert settings.idempotent_tools == ("lookup", "get_weather")
