"""A graph's own progress lines (``get_stream_writer()``) in Slack's live message: under the
edited message in a DM, as task cards in a thread; never a mention."""

from __future__ import annotations

from pathlib import Path

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .conftest import MakeWorld


async def test_a_graphs_progress_lines_show_in_the_edited_message_and_as_task_cards(
    make_world: MakeWorld, tmp_path: Path
):
    settings = AgentSettings(
        graph="tests.agent.stream_graphs:progress", checkpointer_url="memory://", data_dir=str(tmp_path)
    )
    runner = LangGraphRunner(settings)
    try:
        world = await make_world(runner)
        await world.user.dm("find me sources")
        await world.settle()
        await world.user.mention("find me sources")
        await world.settle()
    finally:
        await runner.aclose()

    edited = [e["text"] for e in world.fake.edits() if e["channel"].startswith("D")]
    assert "🔄 _Fetching sources_" in edited
    [reading] = [t for t in edited if "Reading page 2" in t]
    assert "<!here>" not in reading and "&lt;!here&gt;" in reading  # no mention from the graph
    tasks = [
        chunk["title"]
        for call in world.fake.of("chat.startStream") + world.fake.of("chat.appendStream")
        for chunk in call.get("chunks", [])
        if chunk["type"] == "task_update"
    ]
    assert "Fetching sources" in tasks and any(t.startswith("Reading page 2 of 3") for t in tasks)
    assert sorted(m["text"] for m in world.fake.shown()) == ["Found 3 sources."] * 2
