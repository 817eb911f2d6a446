"""The ``agent:`` settings with a LangGraph server (``langgraph dev``): clarigate's shipped server
graph applies what the gateway sends with each run; for another graph, or a setting no server
graph can take, ``serve`` and ``doctor`` stop with one line naming it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from clarigate.agent.limits import limit_message
from clarigate.agent.placement import RULES, Place
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.cli.main import main
from clarigate.gateway.runners.server import LangGraphServerRunner
from clarigate.gateway.runtime.config import load_config, startup_problems
from clarigate.gateway.runtime.preflight import ExitCode
from clarigate.gateway.store.memory import MemoryStore

from ..langgraph_server.shipped import ShippedGraphServer
from ..runtime.placement_cases import (
    APPLIES,
    OTHER,
    SERVER,
    WHERE,
    cases,
    place_env,
    setting_env,
)


@pytest.fixture(scope="module")
def shipped_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ShippedGraphServer]:
    server = ShippedGraphServer(tmp_path_factory.mktemp("shipped"))
    server.start()
    yield server
    server.stop()


def _script(tmp_path: Path, turns: list[dict]) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(turns))
    return f"scripted:{path}"


def _runner(server: ShippedGraphServer, **settings: object) -> LangGraphServerRunner:
    return LangGraphServerRunner(AgentOptions(server_url=server.url, assistant_id="agent", **settings))


async def test_the_shipped_graph_asks_the_approval_the_gateway_requires(
    shipped_server, make_gateway, tmp_path
):
    model = _script(
        tmp_path,
        [{"tool_calls": [{"name": "delete_data", "args": {"target": "test-data"}}]}, {"content": "Done"}],
    )
    runner = _runner(shipped_server, model=model, require_approval={"delete_data": ["approve", "reject"]})
    await runner.start()
    assert runner.shipped is True
    gateway, chat = await make_gateway(MemoryStore("shipped-approval"), runner)
    before = len(shipped_server.tool_calls())

    await chat.say("clean up the test data")
    await gateway.drain(timeout=60)
    request = chat.last_request().request
    assert "delete_data" in request.question and "test-data" in (request.context or "")
    assert len(shipped_server.tool_calls()) == before  # asked, not run

    await chat.click([o.label for o in request.options].index("Reject"))
    await gateway.drain(timeout=60)
    assert len(shipped_server.tool_calls()) == before
    await runner.aclose()


async def test_the_shipped_graph_keeps_to_the_gateways_max_tool_calls(shipped_server, make_gateway, tmp_path):
    again = {"tool_calls": [{"name": "delete_data", "args": {"target": "batch"}}]}
    runner = _runner(
        shipped_server, model=_script(tmp_path, [again, again, again, {"content": "x"}]), max_tool_calls=1
    )
    gateway, chat = await make_gateway(MemoryStore("shipped-limit"), runner)
    before = len(shipped_server.tool_calls())

    await chat.say("delete every batch")
    await gateway.drain(timeout=60)
    assert len(shipped_server.tool_calls()) == before + 1
    assert chat.texts()[-1] == limit_message("tool_calls", "en")
    await runner.aclose()


def expected_line(name: str, place: str) -> str:
    """A setting no server graph takes is found before the server is asked: said for the server."""
    rule = RULES[name]
    if not rule.applies & {Place.SERVER, Place.OTHER_SERVER}:
        return f"agent.{name} does not apply to {WHERE[SERVER]}: {rule.advice[Place.SERVER]}"
    at = {SERVER: Place.SERVER, OTHER: Place.OTHER_SERVER}[place]
    return f"agent.{name} does not apply to {WHERE[place]}: {rule.advice[at]}"


@pytest.mark.parametrize(("name", "place"), cases(SERVER, OTHER))
async def test_doctor_and_serve_on_a_server(
    name, place, shipped_server, clean_environment, monkeypatch, tmp_path
):
    for key, value in {**place_env(place, shipped_server.url), **setting_env(name, tmp_path)}.items():
        monkeypatch.setenv(key, value)
    config = load_config(None)
    runner = LangGraphServerRunner(config.agent)
    try:
        found = startup_problems(config) or await runner.check()
    finally:
        await runner.aclose()
    if place in APPLIES[name]:
        assert found == []
    else:
        assert found == [expected_line(name, place)]


def _doctor_and_serve(capsys) -> tuple[int, list[str], int, list[str]]:
    doctor = main(["doctor"])
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    serve = main(["serve", "--host", "127.0.0.1", "--port", "0"])
    errors = [line for line in capsys.readouterr().err.splitlines() if " ERROR " in line]
    return doctor, problems, serve, errors


UNAPPLIED = [(n, p) for n, p in cases(SERVER, OTHER) if p not in APPLIES[n]]


@pytest.mark.parametrize(("name", "place"), UNAPPLIED)
def test_doctor_and_serve_stop_with_the_one_line(
    name, place, shipped_server, clean_environment, monkeypatch, tmp_path, capsys
):
    for key, value in {**place_env(place, shipped_server.url), **setting_env(name, tmp_path)}.items():
        monkeypatch.setenv(key, value)
    doctor, problems, serve, errors = _doctor_and_serve(capsys)
    line = expected_line(name, place)
    assert (doctor, problems) == (1, [f"PROBLEM settings: {line}"])
    assert serve == ExitCode.CONFIG
    assert len(errors) == 1 and errors[0].endswith(f"cannot start: {line}")


def test_doctor_passes_on_the_shipped_graph_with_its_settings(
    shipped_server, clean_environment, monkeypatch, capsys
):
    for key, value in {
        **place_env(SERVER, shipped_server.url),
        "CLARIGATE_AGENT__REQUIRE_APPROVAL": '["delete_data"]',
        "CLARIGATE_AGENT__MAX_TOOL_CALLS": "3",
    }.items():
        monkeypatch.setenv(key, value)
    assert main(["doctor"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("everything looks right")


def test_chat_stops_on_a_setting_another_graph_does_not_take(
    shipped_server, clean_environment, monkeypatch, tmp_path, capsys
):
    import io

    from clarigate.gateway.cli.chat import chat_main

    for key, value in {
        **place_env(OTHER, shipped_server.url),
        **setting_env("max_tool_calls", tmp_path),
    }.items():
        monkeypatch.setenv(key, value)
    code = chat_main(load_config(None), io.StringIO("hello\n"), io.StringIO(), tmp_path / "thread")
    assert code == 1
    line = expected_line("max_tool_calls", OTHER)
    assert capsys.readouterr().err == f"clarigate chat: the agent could not start: {line}\n"
