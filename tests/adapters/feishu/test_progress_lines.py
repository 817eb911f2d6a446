"""A graph's own progress lines (``get_stream_writer()``) on Feishu's streaming card: each line
under the card while the graph works, escaped (no ``<at>`` ever reaches Feishu)."""

from __future__ import annotations

from pathlib import Path

from clarigate.agent.harness import AgentSettings
from clarigate.gateway.runners.in_process import LangGraphRunner

from .cards import text_of
from .events import message_event
from .test_live import streamed


async def test_a_graphs_progress_lines_show_on_the_streaming_card(make_bot, tmp_path: Path):
    settings = AgentSettings(
        graph="tests.agent.stream_graphs:progress", checkpointer_url="memory://", data_dir=str(tmp_path)
    )
    runner = LangGraphRunner(settings)
    try:
        bot = await make_bot(runner)
        await bot.deliver(message_event("find me sources"))
        await bot.gateway.drain(timeout=30)
    finally:
        await runner.aclose()
    texts = streamed(bot.api)
    assert "🔄 Fetching sources" in texts
    [reading] = [t for t in texts if "Reading page 2" in t]
    assert "<" not in reading and "&#60;!here>" in reading  # escaped: no <at …> can be formed
    [shown] = bot.api.shown()
    assert text_of(shown) == "Found 3 sources."
