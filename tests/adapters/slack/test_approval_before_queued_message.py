"""An approval clicked (and shown as accepted) while someone else's message waits in the thread's
queue takes effect: its answer runs before that message, which would else end the interrupt with
a rejection. The real slack-bolt adapter against the fake Slack, the real LangGraph agent
(scripted model), the in-memory store with its job reads held back while the thread fills."""

from __future__ import annotations

import asyncio
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from clarigate.agent.protocol import catalog
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.store.records import Job
from tests.adapters.approval_agent import delete_records_agent, tool_results
from tests.agent import user_graphs

from .conftest import MakeWorld


class HeldReads(MemoryStore):
    """The in-memory store whose workers read no job while ``held`` is set."""

    def __init__(self) -> None:
        super().__init__(f"test-{uuid.uuid4().hex[:12]}")
        self.held = False

    async def read_jobs(self, consumer: str, count: int, block_ms: int) -> list[Job]:
        if self.held:
            await asyncio.sleep(0.02)
            return []
        return await super().read_jobs(consumer, count, min(block_ms, 20))


@pytest.fixture(autouse=True)
def _fresh() -> None:
    user_graphs.RAN.clear()


@pytest.fixture
async def runner(tmp_path: Path) -> Any:
    made = delete_records_agent(tmp_path, ["approve", "edit", "reject"], "Finished: {last_user}", closings=3)
    yield made
    await made.aclose()


async def test_an_approval_clicked_after_a_queued_message_runs_the_tool_once(
    make_world: MakeWorld, runner: Any
) -> None:
    store = HeldReads()
    world = await make_world(runner, store=store)
    _, ts = await world.user.mention("clean up the users table", user="U1")
    await world.settle()
    question = world.fake.posted()

    store.held = True  # U2's message is accepted and queued, not run yet
    await world.user.mention("what is on today", user="U2", thread_ts=ts)
    await world.adapter.idle()
    await world.user.click(question, "clarigate:o1")  # U1 approves before U2's job runs
    await world.adapter.idle()
    store.held = False
    await world.settle()

    assert user_graphs.RAN == ["delete users 5"]  # U1's decision took effect, once
    results = await tool_results(runner)
    assert catalog.text("approval_superseded") not in results
    edits = [json.dumps(e["blocks"], ensure_ascii=False) for e in world.fake.edits(question["ts"])]
    assert "Answered by <@U1>: Approve" in edits[-1]
    assert not any("Closed" in e for e in edits)
    shown = [m["text"] for m in world.fake.shown()]
    assert shown.count("Finished: what is on today") == 1  # U2's request ran once, after it
    assert shown.index("Finished: what is on today") > shown.index("Finished: clean up the users table")
    assert world.fake.of("chat.postEphemeral") == []
