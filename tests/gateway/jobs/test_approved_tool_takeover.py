"""A replica stopped while an approved tool runs: the replica that takes the answer's job over
(same Redis, same checkpointer) does not ask again and does not start the tool a second time."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import yaml
from langchain_core.tools import tool

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.protocol import catalog
from clarigate.gateway.runners.in_process import LangGraphRunner

from .test_stalled_worker import wait_until

STARTED: list[str] = []
RUNNING = asyncio.Event()


@tool
async def wipe_table(table: str) -> str:
    """Delete every row of ``table``."""
    STARTED.append(table)
    RUNNING.set()
    await asyncio.Event().wait()  # runs until its replica dies
    return f"wiped {table}"


async def _replica(tmp_path: Path) -> tuple[LangGraphRunner, ClarifyingAgent]:
    """A replica's runner, on the checkpointer every replica shares."""
    script = tmp_path / "script.yaml"
    turns = [
        {"tool_calls": [{"name": "wipe_table", "args": {"table": "users"}}]},
        {"content": "Finished."},
    ]
    script.write_text(yaml.safe_dump(turns), encoding="utf-8")
    settings = AgentSettings(
        model=f"scripted:{script}",
        checkpointer_url=f"sqlite:///{tmp_path / 'checkpoints.db'}",
        tools=("tests.gateway.jobs.test_approved_tool_takeover:wipe_table",),
        require_approval={"wipe_table": ["approve", "reject"]},
    )
    agent = await ClarifyingAgent.create(settings)
    return LangGraphRunner(settings, agent=agent), agent


async def test_an_approved_tool_cut_off_by_a_dying_replica_is_neither_asked_nor_run_again(
    tmp_path: Path, redis_stores: Any, make_gateway: Any
) -> None:
    STARTED.clear()
    RUNNING.clear()
    (first_runner, _), (second_runner, second_agent) = await _replica(tmp_path), await _replica(tmp_path)
    store = redis_stores()
    try:
        first, chat = await make_gateway(store, first_runner)
        second, other_chat = await make_gateway(redis_stores(store.prefix), second_runner, start=False)
        await chat.say("wipe the users table")
        await first.drain()
        assert chat.last_request().request.clarification_type == "risk_confirmation"
        assert (await chat.click(0)).accepted  # Approve
        await asyncio.wait_for(RUNNING.wait(), 10)

        await first.stop(grace=0)  # the replica dies while the tool runs
        await second.start()
        await wait_until(lambda: bool(other_chat.texts()))

        assert STARTED == ["users"]  # started once
        assert other_chat.requests() == []  # not asked again
        assert other_chat.texts()[-1] == "Finished."  # the run went on to its end
        thread_id = await store.thread_for_chat(chat.conversation().thread_key, 3600)
        told = [m.text for m in await second_agent.history(thread_id) if m.type == "tool"]
        assert told == [catalog.text("call_cut_by_restart", "en", name="wipe_table")]
    finally:
        await first_runner.aclose()
        await second_runner.aclose()
