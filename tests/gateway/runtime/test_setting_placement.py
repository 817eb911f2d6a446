"""Every agent setting applies where the agent runs, or ``serve``, ``chat`` and ``doctor`` stop on it
with one line naming it: the built-in agent and a user graph (``agent.graph``) in process."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from clarigate.agent.placement import RULES, SettingsDoNotApply
from clarigate.agent.settings import AgentOptions
from clarigate.gateway.cli.chat import chat_main
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import load_config, startup_problems
from clarigate.gateway.runtime.preflight import ExitCode

from .placement_cases import (
    APPLIES,
    BUILT_IN,
    GRAPH,
    WHERE,
    cases,
    place_env,
    setting_env,
)

REPO = Path(__file__).parents[3]


pytestmark = pytest.mark.usefixtures("clean_environment")


def _set(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def expected_line(name: str, place: str) -> str:
    """The one line for ``name`` at ``place``: it names the setting, the place and what to do."""
    from clarigate.agent.placement import Place

    advice = RULES[name].advice[{BUILT_IN: Place.BUILT_IN, GRAPH: Place.GRAPH}[place]]
    return f"agent.{name} does not apply to {WHERE[place]}: {advice}"


def test_the_table_has_a_row_for_every_setting_and_says_what_to_do_elsewhere() -> None:
    assert set(RULES) == set(AgentOptions.model_fields)
    assert set(APPLIES) | {"server_url"} == set(RULES)
    for name, rule in RULES.items():
        for place in set(rule.advice) | set(rule.applies):
            assert (place in rule.applies) != (place in rule.advice), (name, place)
            if place in rule.advice:
                assert f"remove {name}" in rule.advice[place] or "remove graph" in rule.advice[place]


def test_a_user_graph_with_require_approval_is_said_in_those_words(monkeypatch, tmp_path, capsys) -> None:
    _set(monkeypatch, {**place_env(GRAPH), **setting_env("require_approval", tmp_path)})
    assert main(["doctor"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert problems == [
        "PROBLEM settings: agent.require_approval does not apply to agent.graph: "
        "add HumanInTheLoopMiddleware to your graph, or remove require_approval"
    ]


@pytest.mark.parametrize(("name", "place"), cases(BUILT_IN, GRAPH))
def test_doctor_and_serves_preflight(name, place, monkeypatch, tmp_path, capsys) -> None:
    _set(monkeypatch, {**place_env(place), **setting_env(name, tmp_path, place)})
    problems = startup_problems(load_config(None))
    code = main(["doctor"])
    out = capsys.readouterr().out
    if place in APPLIES[name]:
        assert problems == []
        assert code == 0, out
        assert out.rstrip().endswith("everything looks right")
    else:
        assert problems == [expected_line(name, place)]
        assert code == 1
        assert [line for line in out.splitlines() if line.startswith("PROBLEM")] == [
            f"PROBLEM settings: {expected_line(name, place)}"
        ]


UNAPPLIED = [(n, p) for n, p in cases(BUILT_IN, GRAPH) if p not in APPLIES[n]]


@pytest.mark.parametrize(("name", "place"), UNAPPLIED)
def test_serve_stops_with_the_one_line(name, place, monkeypatch, tmp_path, capsys) -> None:
    _set(monkeypatch, {**place_env(place), **setting_env(name, tmp_path)})
    code = main(["serve", "--host", "127.0.0.1", "--port", "0"])
    lines = capsys.readouterr().err.splitlines()
    assert code == ExitCode.CONFIG
    errors = [line for line in lines if " ERROR " in line]
    assert len(errors) == 1 and errors[0].endswith(f"cannot start: {expected_line(name, place)}"), lines


@pytest.mark.parametrize(("name", "place"), UNAPPLIED)
def test_chat_stops_with_the_one_line(name, place, monkeypatch, tmp_path, capsys) -> None:
    _set(monkeypatch, {**place_env(place), **setting_env(name, tmp_path)})
    code = chat_main(load_config(None), io.StringIO("hello\n"), io.StringIO(), tmp_path / "thread")
    assert code == 1
    assert (
        capsys.readouterr().err
        == f"clarigate chat: the agent could not start: {expected_line(name, place)}\n"
    )


async def test_the_library_refuses_them_too() -> None:
    from clarigate.agent.harness import AgentSettings, ClarifyingAgent

    settings = AgentSettings(
        checkpointer_url="memory://", graph="tests.agent.user_graphs:plain", max_tool_calls=3, model="x:y"
    )
    with pytest.raises(SettingsDoNotApply) as refused:
        await ClarifyingAgent.create(settings)
    assert [line.split(":")[0] for line in refused.value.lines] == [
        "agent.model does not apply to agent.graph",
        "agent.max_tool_calls does not apply to agent.graph",
    ]


def test_a_setting_at_its_default_is_not_set(monkeypatch) -> None:
    _set(
        monkeypatch, {**place_env(GRAPH), "CLARIGATE_AGENT__MODEL": "offline", "CLARIGATE_AGENT__TOOLS": "[]"}
    )
    assert startup_problems(load_config(None)) == []


def _serve_process(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    from tests.gateway.langgraph_server.process import free_port

    port = free_port()
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))},
        "PYTHONPATH": str(REPO),
        "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
        **env,
    }
    command = [sys.executable, "-m", "clarigate.gateway.cli.main", "serve", "--host", "127.0.0.1"]
    proc = subprocess.Popen(
        [*command, "--port", str(port)],
        cwd=REPO,
        env=environ,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    return proc, f"http://127.0.0.1:{port}"


def test_a_real_serve_starts_with_what_applies_and_stops_on_what_does_not(tmp_path: Path) -> None:
    graph = place_env(GRAPH)
    proc, url = _serve_process(tmp_path, {**graph, "CLARIGATE_AGENT__RECURSION_LIMIT": "60"})
    try:
        deadline = time.monotonic() + 60
        ready = False
        while not ready and proc.poll() is None and time.monotonic() < deadline:
            with contextlib.suppress(httpx.HTTPError):
                ready = httpx.get(f"{url}/readyz", timeout=1).status_code == 200
            time.sleep(0.1)
        assert ready, proc.stdout.read().decode() if proc.poll() is not None and proc.stdout else "no answer"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert proc.returncode == 0

    proc, _ = _serve_process(tmp_path, {**graph, "CLARIGATE_AGENT__REQUIRE_APPROVAL": '["lookup"]'})
    output, _ = proc.communicate(timeout=60)
    assert proc.returncode == ExitCode.CONFIG
    errors = [line for line in output.decode().splitlines() if " ERROR " in line]
    assert len(errors) == 1 and errors[0].endswith(expected_line("require_approval", GRAPH))
