"""A turn handed back midway resumes from its checkpoint; a thread keeps one checkpoint, not all.

Storage per thread: every checkpoint holds the thread's whole history, so keeping each one
grows with the square of the turns. After pruning, what a thread stores is one history:
one checkpoint per namespace, and bytes that grow with the history, not with its square.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
import pytest
from langchain_core.messages import BaseMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.models.scripted import ScriptedChatModel

from .conftest import ask, scripted
from .test_checkpoint import POSTGRES_URL, _postgres_reachable


class CrashesOnce(ScriptedChatModel):
    """A scripted model whose ``crash_on_call``-th call fails once (the process died there)."""

    crash_on_call: int = 0
    crashed: bool = False

    def observe(self, messages: list[BaseMessage]) -> None:
        super().observe(messages)
        if not self.crashed and len(self.calls) == self.crash_on_call:
            self.crashed = True
            raise RuntimeError("the process died here")


async def test_a_turn_cut_off_after_its_tool_ran_resumes_without_running_it_again(make_agent, recorder):
    model = CrashesOnce(
        turns=scripted(
            {"content": "", "tool_calls": [{"name": "record_note", "args": {"note": "{last_user}"}}]},
            {"content": "Noted and done."},
        ).turns,
        crash_on_call=2,  # after the tool ran, before the final answer
    )
    agent = await make_agent(model, tools=[recorder.tool])

    with pytest.raises(RuntimeError):
        await agent.run_turn("t1", "remember the milk", turn_id="job-1")
    assert recorder.ran == ["remember the milk"]

    done = await agent.run_turn("t1", "remember the milk", turn_id="job-1")  # the job, taken over

    assert done.replies == ["Noted and done."]
    assert recorder.ran == ["remember the milk"]  # the tool did not run twice
    humans = [m for m in await agent.history("t1") if m.type == "human"]
    assert [m.content for m in humans] == ["remember the milk"]


async def test_a_finished_turn_asked_again_gives_its_output_without_running(make_agent, recorder):
    model = scripted(
        {"content": "", "tool_calls": [{"name": "record_note", "args": {"note": "{last_user}"}}]},
        {"content": "Done once."},
        {"content": "A second run would say this."},
    )
    agent = await make_agent(model, tools=[recorder.tool])

    first = await agent.run_turn("t1", "go", turn_id="job-7")
    again = await agent.run_turn("t1", "go", turn_id="job-7")

    assert first.replies == again.replies == ["Done once."]
    assert recorder.ran == ["go"] and len(model.calls) == 2


async def test_a_question_asked_in_a_finished_turn_is_given_again(make_agent):
    agent = await make_agent(scripted({"content": "", "tool_calls": [ask(options=["A", "B"])]}))

    first = await agent.run_turn("t1", "start", turn_id="job-3")
    again = await agent.run_turn("t1", "start", turn_id="job-3")

    assert first.request is not None and again.request == first.request


async def _sqlite_rows(agent: ClarifyingAgent, thread_id: str) -> tuple[int, int]:
    conn = agent._checkpointer.saver.conn  # type: ignore[attr-defined]
    cursor = await conn.execute(
        "SELECT COUNT(*), COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints"
        " WHERE thread_id = ?",
        (thread_id,),
    )
    count, size = await cursor.fetchone()
    cursor = await conn.execute(
        "SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes WHERE thread_id = ?", (thread_id,)
    )
    (writes,) = await cursor.fetchone()
    return count, size + writes


def _memory_rows(agent: ClarifyingAgent, thread_id: str) -> tuple[int, int]:
    saver = agent._checkpointer.saver  # type: ignore[attr-defined]
    checkpoints = [c for ns in saver.storage.get(thread_id, {}).values() for c in ns.values()]
    size = sum(len(c[0][1]) for c in checkpoints)
    blobs = sum(len(blob[1]) for key, blob in saver.blobs.items() if key[0] == thread_id)
    writes = sum(len(w) for key, w in saver.writes.items() if key[0] == thread_id)
    return len(checkpoints), size + blobs + writes


def _postgres_rows(thread_id: str) -> tuple[int, int]:
    with psycopg.connect(POSTGRES_URL) as conn:
        count, size = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(pg_column_size(checkpoint) + pg_column_size(metadata)), 0)"
            " FROM checkpoints WHERE thread_id = %s",
            (thread_id,),
        ).fetchone()
        (blobs,) = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM checkpoint_blobs WHERE thread_id = %s", (thread_id,)
        ).fetchone()
        (writes,) = conn.execute(
            "SELECT COALESCE(SUM(LENGTH(blob)), 0) FROM checkpoint_writes WHERE thread_id = %s", (thread_id,)
        ).fetchone()
    return count, size + blobs + writes


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "memory"])
async def test_storage_per_thread_stays_one_history_over_50_turns(kind: str, tmp_path: Path) -> None:
    if kind == "postgres" and not _postgres_reachable():
        pytest.skip("PostgreSQL is not reachable on 127.0.0.1:5432")
    urls = {"sqlite": f"sqlite:///{tmp_path / 'c.sqlite'}", "postgres": POSTGRES_URL, "memory": "memory://"}
    thread_id = f"flat-{uuid.uuid4().hex}"
    agent = await ClarifyingAgent.create(AgentSettings(model="offline", checkpointer_url=urls[kind]))
    sizes: list[int] = []
    try:
        for turn in range(50):
            await agent.run_turn(thread_id, f"note number {turn}: the build is green", turn_id=f"j{turn}")
            if kind == "sqlite":
                count, size = await _sqlite_rows(agent, thread_id)
            elif kind == "memory":
                count, size = _memory_rows(agent, thread_id)
            else:
                count, size = _postgres_rows(thread_id)
            assert count == 1, f"turn {turn}: {count} checkpoints kept"
            sizes.append(size)
        messages = len(await agent.history(thread_id))
    finally:
        if kind == "postgres":
            await agent.delete_thread(thread_id)
        await agent.aclose()

    assert messages >= 100  # the history itself is all there
    # grows with the history (about 2x from turn 25 to 50), not with its square (about 4x)
    assert sizes[49] < 2.5 * sizes[24]
    growth = [later - earlier for earlier, later in zip(sizes[10:], sizes[11:], strict=False)]
    assert max(growth) < 3 * (sum(growth) / len(growth))  # every turn adds about the same


async def test_pruning_one_thread_in_memory_leaves_the_others_whole() -> None:
    agent = await ClarifyingAgent.create(AgentSettings(model="offline", checkpointer_url="memory://"))
    try:
        for turn in range(3):
            for thread_id in ("a", "b"):
                await agent.run_turn(thread_id, f"{thread_id} note {turn}", turn_id=f"{thread_id}{turn}")
        histories = {t: [m.content for m in await agent.history(t)] for t in ("a", "b")}
        rows = {t: _memory_rows(agent, t) for t in ("a", "b")}
    finally:
        await agent.aclose()
    assert [text for text in histories["b"] if text.startswith("b note")] == [f"b note {i}" for i in range(3)]
    assert [text for text in histories["a"] if text.startswith("a note")] == [f"a note {i}" for i in range(3)]
    assert rows["a"][0] == rows["b"][0] == 1


async def test_without_pruning_the_same_turns_would_grow_with_the_square(tmp_path: Path) -> None:
    """The measure above can fail: without pruning, storage grows much faster than the history."""
    agent = await ClarifyingAgent.create(
        AgentSettings(model="offline", checkpointer_url=f"sqlite:///{tmp_path / 'c.sqlite'}")
    )

    async def no_prune(thread_id: str) -> None:
        return None

    agent._checkpointer.prune = no_prune  # type: ignore[method-assign]
    sizes: list[int] = []
    try:
        for turn in range(50):
            await agent.run_turn("t", f"note number {turn}: the build is green", turn_id=f"j{turn}")
            sizes.append((await _sqlite_rows(agent, "t"))[1])
    finally:
        await agent.aclose()
    assert sizes[49] > 3 * sizes[24]


async def test_a_message_reads_its_threads_state_once_before_running(make_agent, monkeypatch):
    """Looking for an earlier attempt at the turn and for interrupts to supersede share one read
    of the thread's state: a read costs with the thread's history, on every message."""
    agent = await make_agent(scripted({"content": "one"}, {"content": "two"}, {"content": "three"}))
    await agent.run_turn("t1", "first", turn_id="job-1")
    await agent.run_turn("t1", "second", turn_id="job-2")
    graph, reads = agent._graph, []
    real = graph.aget_state

    async def counted(*args, **kwargs):
        reads.append(args)
        return await real(*args, **kwargs)

    monkeypatch.setattr(graph, "aget_state", counted)
    done = await agent.run_turn("t1", "third", turn_id="job-3")

    assert done.replies == ["three"]
    assert len(reads) == 1
