"""Routes: conversations sent to different agents by platform, chat or chat type, the others to
``agent:``; each route's settings checked where its agent runs; ``doctor`` and ``/status``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.app import build_runner
from clarigate.gateway.runtime.config import load_config, startup_problems
from clarigate.gateway.store.memory import MemoryStore
from tests.agent.openai_stub import Stub, serving
from tests.conftest import config_for_tests

PLAIN = "tests.agent.user_graphs:plain"  # replies "echo: <text>"
SPEAKER = "tests.agent.speaker_graphs:declares"  # replies what it read of the speaker, as JSON


@pytest.fixture(autouse=True)
def _clean(clean_environment: Any) -> None:
    """No operator variables from the machine."""


async def _gateway(make_gateway: Any, name: str, **settings: Any) -> tuple[Any, Any, Any]:
    runner = build_runner(config_for_tests(**settings))
    gateway, adapter = await make_gateway(MemoryStore(name), runner, **settings)
    return gateway, adapter, runner


async def test_two_chats_go_to_two_graphs_and_status_names_each(make_gateway: Any) -> None:
    settings = {
        "agent": {"graph": PLAIN, "checkpointer_url": "memory://"},
        "routes": [{"name": "ops", "match": {"chat": "g2"}, "agent": {"graph": SPEAKER}}],
    }
    gateway, adapter, runner = await _gateway(make_gateway, "routes-two", **settings)
    try:
        await adapter.say("hello", user="u1", chat="g1", direct=False)
        await adapter.say("hello", user="u2", chat="g2", direct=False)
        await gateway.drain()
        assert adapter.texts("g1") == ["echo: hello"]
        saw = json.loads(adapter.texts("g2")[0])
        assert saw["configurable"]["agent"] == "ops" and saw["context"]["clarigate"]["agent"] == "ops"
        await adapter.say("/status", user="u1", chat="g1", direct=False)
        await adapter.say("/status", user="u2", chat="g2", direct=False)
        await gateway.drain()
        assert adapter.texts("g1")[-1].endswith(f"• Answered by: default (graph {PLAIN}).")
        assert adapter.texts("g2")[-1].endswith(f"• Answered by: ops (graph {SPEAKER}).")
    finally:
        await runner.aclose()


async def test_status_names_each_kind_of_agent_in_the_persons_language(make_gateway: Any) -> None:
    """``/status`` says what answers (a graph, a server's assistant, a model) in the words of the
    person's locale; a server's assistant is told from the configuration, the server not asked."""
    server = {"server_url": "http://127.0.0.1:9", "assistant_id": "helper"}  # nothing listens
    settings = {
        "agent": {"model": "offline", "checkpointer_url": "memory://"},
        "routes": [
            {"name": "ops", "match": {"chat": "g2"}, "agent": {"graph": PLAIN}},
            {"name": "remote", "match": {"chat": ["g3", "g4"]}, "agent": server},
        ],
    }
    gateway, adapter, runner = await _gateway(make_gateway, "routes-status-words", **settings)
    try:
        for chat, language in (("g1", "zh-hans"), ("g2", "zh-hans"), ("g3", "zh-hans"), ("g4", "en")):
            await adapter.say("/status", user="u1", chat=chat, direct=False, language=language)
        await gateway.drain()
        assert adapter.texts("g1")[-1].endswith("• 由 default 回答（模型 offline）。")
        assert adapter.texts("g2")[-1].endswith(f"• 由 ops 回答（图 {PLAIN}）。")
        assert adapter.texts("g3")[-1].endswith("• 由 remote 回答（LangGraph 服务器上的助手 helper）。")
        assert adapter.texts("g4")[-1].endswith(
            "• Answered by: remote (assistant helper on the LangGraph server)."
        )
    finally:
        await runner.aclose()


async def test_routes_by_chat_type_give_the_built_in_agent_other_instructions_and_tools(
    make_gateway: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The built-in agent on a provider's API (the OpenAI-compatible stub): private chats get the
    route's instructions and tool, groups the ``agent:`` section's."""
    settings = {
        "agent": {
            "model": "openai:gpt-4.1-mini",
            "checkpointer_url": "memory://",
            "instructions": "Be brief.",
        },
        "routes": [
            {
                "name": "one-to-one",
                "match": {"chat_type": "private", "platform": ["test", "slack"]},
                "agent": {"instructions": "Answer warmly.", "tools": ["tests.agent.user_graphs:lookup"]},
            }
        ],
    }
    with serving(Stub(replies=["Hi.", "Hello."]), monkeypatch) as stub:
        gateway, adapter, runner = await _gateway(make_gateway, "routes-types", **settings)
        try:
            await adapter.say("hi", user="u1", chat="g1", direct=False)
            await gateway.drain()
            await adapter.say("hi", user="u1", chat="d1", direct=True)
            await gateway.drain()
        finally:
            await runner.aclose()
    group, private = stub.received
    assert "Be brief." in _system(group) and "Answer warmly." not in _system(group)
    assert "Answer warmly." in _system(private) and "Be brief." not in _system(private)
    assert "lookup" not in _tools(group) and "lookup" in _tools(private)
    assert adapter.texts("g1") == ["Hi."] and adapter.texts("d1") == ["Hello."]


def _system(body: dict[str, Any]) -> str:
    return "\n".join(str(m["content"]) for m in body["messages"] if m["role"] in ("system", "developer"))


def _tools(body: dict[str, Any]) -> set[str]:
    return {t["function"]["name"] for t in body.get("tools") or []}


def _bot(tmp_path: Path, **settings: Any) -> str:
    path = tmp_path / "bot.yaml"
    path.write_text(yaml.safe_dump(settings), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("route", "says"),
    [
        ({"name": "a", "match": {"chats": ["g1"]}}, "chats"),  # a misspelt match key
        (
            {"name": "a", "match": {"platfrom": "slack"}},
            "platfrom is not a match key (did you mean `platform`?)",
        ),
        ({"nmae": "a", "match": {}}, "nmae is not a route setting (did you mean `name`?)"),
        (
            {"name": "a", "match": {}, "agent": {"instrucions": "hi"}},
            "routes.0.agent: instrucions is not an agent setting (did you mean `instructions`?)",
        ),
        ({"name": "a", "match": {"chat_type": "dm"}}, "chat_type"),  # not a chat type
        ({"name": "a", "match": {}, "agent": {"toolz": []}}, "toolz is not an agent setting"),
        ({"name": "default", "match": {}}, "'default' is the agent: section's name"),
        ({"name": "a", "match": {}, "agent": {"max_model_calls": 0}}, "routes.a.agent: "),  # a wrong value
    ],
)
def test_a_wrong_route_stops_loading_naming_it(tmp_path: Path, route: dict[str, Any], says: str) -> None:
    with pytest.raises(ValueError, match="routes") as raised:
        load_config(_bot(tmp_path, routes=[route]))
    assert says in str(raised.value)


def test_two_routes_of_one_name_stop_loading(tmp_path: Path) -> None:
    routes = [{"name": "a", "match": {"chat": "1"}}, {"name": "a", "match": {"chat": "2"}}]
    with pytest.raises(ValueError, match="route name 'a' is given to more than one route"):
        load_config(_bot(tmp_path, routes=routes))


def test_a_route_setting_that_does_not_apply_where_it_runs_is_named(tmp_path: Path) -> None:
    """The built-in agent's tools do not follow a chat sent to a graph (not inherited); a graph
    route that sets tools itself is told they do not apply there."""
    agent = {"checkpointer_url": "memory://", "tools": ["tests.agent.user_graphs:lookup"]}
    quiet = load_config(
        _bot(tmp_path, agent=agent, routes=[{"name": "g", "match": {}, "agent": {"graph": PLAIN}}])
    )
    assert startup_problems(quiet) == []
    assert quiet.routes[0].options(quiet.agent).tools == ()
    own = {"graph": PLAIN, "tools": ["tests.agent.user_graphs:lookup"]}
    loud = load_config(_bot(tmp_path, agent=agent, routes=[{"name": "g", "match": {}, "agent": own}]))
    assert startup_problems(loud) == [
        "routes.g: agent.tools does not apply to agent.graph: give the tools to your graph, or remove tools"
    ]
    assert (
        main(
            [
                "serve",
                "--config",
                _bot(tmp_path, agent=agent, routes=[{"name": "g", "match": {}, "agent": own}]),
                "--port",
                "0",
            ]
        )
        == 2
    )


def test_doctor_checks_every_route(tmp_path: Path, capsys: Any) -> None:
    bot = _bot(
        tmp_path,
        agent={"graph": PLAIN, "checkpointer_url": "memory://"},
        routes=[
            {"name": "ops", "match": {"chat": "g2"}, "agent": {"graph": SPEAKER}},
            {"name": "broken", "match": {"platform": "telegram"}, "agent": {"graph": "no_such_module:graph"}},
        ],
    )
    assert main(["doctor", "--config", bot]) == 1
    out = capsys.readouterr().out
    assert f"ok      agent: graph {PLAIN}, checkpointer memory://" in out  # its graph, not a model
    assert f"ok      route ops: graph {SPEAKER}, checkpointer memory://" in out
    assert (
        "PROBLEM route broken: agent.graph 'no_such_module:graph' could not be loaded: "
        "ModuleNotFoundError: No module named 'no_such_module' (the module and what it imports must "
        "be importable where clarigate runs: install its package or add its folder to PYTHONPATH)"
    ) in out
    assert "agent.model" not in out and "agent.mcp_servers" not in out


async def test_the_run_lines_name_the_model_of_the_route_that_answers(
    make_gateway: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    script = tmp_path / "model.yaml"
    script.write_text(json.dumps([{"content": "from the route"}]))
    settings = {
        "agent": {"model": "offline", "checkpointer_url": "memory://"},
        "routes": [{"name": "ops", "match": {"chat": "g2"}, "agent": {"model": f"scripted:{script}"}}],
    }
    gateway, adapter, runner = await _gateway(make_gateway, "routes-model", **settings)
    try:
        with caplog.at_level("INFO"):
            await adapter.say("hello", user="u2", chat="g2", direct=False)
            await gateway.drain()
        assert adapter.texts("g2") == ["from the route"]
        started = [r.getMessage() for r in caplog.records if r.getMessage().startswith("run started")]
        assert started == [f"run started (model scripted:{script})"]
    finally:
        await runner.aclose()
