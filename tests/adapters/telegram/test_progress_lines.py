"""A graph's own progress lines (``get_stream_writer()``) in Telegram's live draft: each line in
italics while the graph works, HTML-escaped."""

from __future__ import annotations

from pathlib import Path

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .harness import message_update


async def test_a_graphs_progress_lines_show_in_the_private_draft(bench, tmp_path: Path):
    settings = AgentSettings(
        graph="tests.agent.stream_graphs:progress", checkpointer_url="memory://", data_dir=str(tmp_path)
    )
    runner = LangGraphRunner(settings)
    try:
        tg = await bench(runner)
        await tg.deliver(message_update("find me sources"))
    finally:
        await runner.aclose()
    drafts = [str(call.params.get("text", "")) for call in tg.api.of("sendMessageDraft")]
    assert "<i>🔄 Fetching sources</i>" in drafts
    assert "<i>🔄 Reading page 2 of 3 &lt;!here&gt; @\u2060everyone</i>" in drafts  # made inert
    assert [str(c.params["text"]) for c in tg.api.of("sendMessage")] == ["Found 3 sources."]
