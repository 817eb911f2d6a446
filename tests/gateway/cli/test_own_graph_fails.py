"""An operator's own graph (``agent.graph``) that cannot be loaded is named, with what applies to
it (its module importable, the name after ``:``), as a configuration problem: not the built-in
agent's advice about models, keys, tools and MCP servers."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.preflight import ExitCode

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

MISSING = "clarigate_no_such_pkg.graph:make_graph"
NOT_IMPORTABLE = (
    f"agent.graph {MISSING!r} could not be loaded: ModuleNotFoundError: "
    "No module named 'clarigate_no_such_pkg' (the module and what it imports must be importable "
    "where clarigate runs: install its package or add its folder to PYTHONPATH)"
)
BUILT_IN_ADVICE = ("model 'offline'", "agent.model", "API key", "agent.tools", "agent.mcp_servers")


def _config_file(tmp_path: Path, graph: str) -> str:
    bot = tmp_path / "bot.yaml"
    bot.write_text(f"agent:\n  graph: '{graph}'\n", encoding="utf-8")
    return str(bot)


def test_doctor_names_the_graph_whose_module_cannot_be_imported(tmp_path, capsys):
    assert main(["doctor", "--config", _config_file(tmp_path, MISSING)]) == 1

    out = capsys.readouterr().out
    problems = [line for line in out.splitlines() if line.startswith("PROBLEM")]
    assert problems == [f"PROBLEM agent: {NOT_IMPORTABLE}"], out
    assert not any(advice in out for advice in BUILT_IN_ADVICE), out


def test_serve_stops_with_the_configuration_exit_code_naming_the_graph(tmp_path, capsys):
    bot = _config_file(tmp_path, MISSING)

    assert main(["serve", "--config", bot, "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG

    err = capsys.readouterr().err
    assert NOT_IMPORTABLE in err
    assert not any(advice in err for advice in BUILT_IN_ADVICE), err


def test_chat_names_the_graph_whose_module_cannot_be_imported(tmp_path, capsys):
    config = GatewayConfig(data_dir=str(tmp_path / "data"), agent={"graph": MISSING})

    assert chat_main(config, io.StringIO("hello\n"), io.StringIO()) == 1

    assert capsys.readouterr().err == f"clarigate chat: {NOT_IMPORTABLE}\n"


def test_a_name_the_module_does_not_have_is_named_with_what_to_check(tmp_path, capsys):
    graph = f"{__name__}:no_such_factory"

    assert main(["doctor", "--config", _config_file(tmp_path, graph)]) == 1

    out = capsys.readouterr().out
    said = (
        f"PROBLEM agent: agent.graph {graph!r}: {__name__} has no 'no_such_factory' (check the name after ':'"
    )
    assert said in out, out
    assert not any(advice in out for advice in BUILT_IN_ADVICE), out


def failing_factory(checkpointer: object) -> object:
    raise RuntimeError("the graph needs ROUTER_URL")


def test_a_factory_that_raises_is_named_with_what_it_raised(tmp_path, capsys):
    graph = f"{__name__}:failing_factory"

    assert main(["serve", "--config", _config_file(tmp_path, graph), "--port", "0"]) == ExitCode.CONFIG

    err = capsys.readouterr().err
    assert f"agent.graph {graph!r} could not be loaded: RuntimeError: the graph needs ROUTER_URL" in err
    assert not any(advice in err for advice in BUILT_IN_ADVICE), err


def test_serve_names_a_routes_graph_not_the_default_agents(tmp_path, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text(
        "agent:\n  graph: 'tests.agent.user_graphs:plain'\n  checkpointer_url: 'memory://'\n"
        f"routes:\n  - name: billing\n    match: {{chat: g2}}\n    agent: {{graph: '{MISSING}'}}\n",
        encoding="utf-8",
    )

    assert main(["serve", "--config", str(bot), "--port", "0"]) == ExitCode.CONFIG

    [said] = [line for line in capsys.readouterr().err.splitlines() if "cannot start" in line]
    assert said.endswith(f"cannot start: route billing: {NOT_IMPORTABLE}"), said
