"""Who is talking reaches a graph on a LangGraph server (``langgraph dev``): from the run's
``configurable`` whatever the graph, and from its runtime context as its schema declares it."""

from __future__ import annotations

import json
from typing import Any

import pytest

from clarigate.agent.settings import AgentOptions
from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.store.memory import MemoryStore

from .test_speaker import expected_speaker


async def _server_graph_saw(server: Any, make_gateway: Any, graph: str) -> dict[str, Any]:
    runner = LangGraphServerRunner(
        AgentOptions(server_url=server.url, assistant_id=f"speaker_{graph}"), bot_id="helpdesk"
    )
    try:
        gateway, adapter = await make_gateway(
            MemoryStore(f"speaker-server-{graph}"), runner, bot_id="helpdesk"
        )
        await adapter.say("hi", user="u7", name="Ada", chat="g1", direct=False, language="en-US")
        await gateway.drain()
        return dict(json.loads(adapter.texts()[-1]))
    finally:
        await runner.aclose()


@pytest.mark.parametrize(
    ("graph", "context"),
    [
        # a dataclass naming the field: built from it, its own field at its default
        ("declares", {"type": "DeclaresSpeaker", "tier": "free", "clarigate": expected_speaker()}),
        # no schema: the context is the mapping the run sent
        ("no_schema", {"clarigate": expected_speaker()}),
        # a dataclass that does not name it: the server leaves it out, and the graph still runs
        ("own_context", {"type": "OwnContextOnly", "tier": "free"}),
    ],
)
async def test_a_server_graph_reads_who_is_talking(
    langgraph_server: Any, make_gateway: Any, graph: str, context: dict[str, Any]
) -> None:
    saw = await _server_graph_saw(langgraph_server, make_gateway, graph)
    assert saw["configurable"] == expected_speaker()
    assert saw["context"] == context


async def test_a_route_sends_one_chat_to_an_assistant_on_the_server(
    langgraph_server: Any, make_gateway: Any, clean_environment: Any
) -> None:
    """The ``agent:`` section's graph runs in process; chat g2's route names an assistant on the
    server (the in-process settings it does not take are not inherited)."""
    from clarigate.gateway.runtime.app import build_runner
    from tests.conftest import config_for_tests

    route = {"server_url": langgraph_server.url, "assistant_id": "speaker_no_schema"}
    settings = {
        "bot_id": "helpdesk",
        "agent": {"graph": "tests.agent.user_graphs:plain", "checkpointer_url": "memory://"},
        "routes": [{"name": "remote", "match": {"chat": "g2", "chat_type": "group"}, "agent": route}],
    }
    runner = build_runner(config_for_tests(**settings))
    try:
        gateway, adapter = await make_gateway(MemoryStore("speaker-server-route"), runner, **settings)
        await adapter.say("hi", user="u7", name="Ada", chat="g1", direct=False, language="en-US")
        await adapter.say("hi", user="u7", name="Ada", chat="g2", direct=False, language="en-US")
        await gateway.drain()
    finally:
        await runner.aclose()
    assert adapter.texts("g1") == ["echo: hi"]
    remote = {**expected_speaker(chat_id="g2"), "agent": "remote"}
    assert json.loads(adapter.texts("g2")[0]) == {"configurable": remote, "context": {"clarigate": remote}}
