"""A graph's own progress lines (``custom`` stream mode, ``get_stream_writer()``) in the live
message: in process and on a LangGraph server (``langgraph dev``), the same lines."""

from __future__ import annotations

from pathlib import Path

from clarigate.agent.events import Progress
from clarigate.agent.harness import AgentSettings
from clarigate.agent.run_events import PROGRESS_CHARS, progress_line
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.boundary.outbound_items import TextReply
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runners.server import LangGraphServerRunner
from tests.gateway.flow.test_streaming import live_gateway

GRAPH = "tests.agent.stream_graphs:progress"
LINES = ["🔄 Fetching sources", "🔄 Reading page 2 of 3 <!here> @everyone"]


def test_a_progress_line_is_a_string_or_a_progress_mapping_on_one_line_cut_to_fit():
    assert progress_line("Fetching sources") == Progress("Fetching sources")
    assert progress_line({"progress": "Reading\n  page 2"}) == Progress("Reading page 2")
    assert progress_line({"rows": 3}) is None and progress_line(42) is None
    assert progress_line("   ") is None and progress_line({"progress": ["a"]}) is None
    long = progress_line("word " * 100)
    assert long is not None and len(long.text) == PROGRESS_CHARS and long.text.endswith("…")


async def _statuses_and_reply(make_gateway, runner) -> tuple[list[str], list[object]]:  # type: ignore[no-untyped-def]
    gateway, chat = await live_gateway(make_gateway, runner, 0.1, progress_after_seconds=0.0)
    await chat.say("find me sources")
    await gateway.drain(timeout=60)
    statuses = [view.status for _, view in chat.shown if view.status]
    return statuses, [item for _, item in chat.sent]


async def test_an_in_process_graphs_progress_lines_are_shown_live(make_gateway, tmp_path: Path):
    settings = AgentSettings(graph=GRAPH, checkpointer_url="memory://", data_dir=str(tmp_path))
    runner = LangGraphRunner(settings)
    try:
        statuses, sent = await _statuses_and_reply(make_gateway, runner)
    finally:
        await runner.aclose()
    assert [s for s in statuses if s.startswith("🔄")] == LINES  # the other custom data is not a line
    assert statuses[0] == "⏳ Working…"
    [reply] = sent
    assert isinstance(reply, TextReply) and reply.text == "Found 3 sources." and reply.live is not None


async def test_a_server_graphs_progress_lines_are_shown_live(make_gateway, langgraph_server):
    runner = LangGraphServerRunner(AgentOptions(server_url=langgraph_server.url, assistant_id="progress"))
    try:
        statuses, sent = await _statuses_and_reply(make_gateway, runner)
    finally:
        await runner.aclose()
    assert [s for s in statuses if s.startswith("🔄")] == LINES
    [reply] = sent
    assert isinstance(reply, TextReply) and reply.text == "Found 3 sources." and reply.live is not None
