"""Tool names in ``require_approval`` and ``idempotent_tools`` name tools the agent is offered, or
the start (``serve``, ``chat``, the library) stops on them and ``clarigate doctor`` names them.

A server with ``tool_name_prefix: true`` offers its ``ping`` as ``h_ping``: ``ping`` written in
``require_approval`` (the server's own name) gates ``h_ping``; the tool never runs unasked.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from langchain_core.messages import ToolMessage

from clarigate.agent.harness import AgentSettings, ClarifyingAgent
from clarigate.agent.placement import SettingsDoNotApply
from clarigate.gateway.runtime.preflight import ExitCode

from .conftest import scripted
from .test_mcp_sessions import CLARIGATE, counter


def ping_server(tmp_path: Path, *, prefix: bool = False) -> dict[str, Any]:
    """The counter server offering ``ping`` (which answers "ping"), prefixed or not."""
    return {**counter(tmp_path / "pids", "ping"), **({"tool_name_prefix": True} if prefix else {})}


def run_cli(tmp_path: Path, agent: dict[str, Any], *command: str) -> subprocess.CompletedProcess[str]:
    """``clarigate COMMAND --config bot.yaml`` with ``agent:`` as given, no other operator setting."""
    bot = tmp_path / "bot.yaml"
    bot.write_text(yaml.safe_dump({"agent": agent}))
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(tmp_path / "data")}
    for name in [n for n in env if n.startswith("CLARIGATE_") and n != "CLARIGATE_DATA_DIR"]:
        env.pop(name)
    for name in ("CHECKPOINTER_URL", "LANGGRAPH_URL", "REDIS_URL", "LLM_MODEL", "PORT"):
        env.pop(name, None)
    argv = [str(CLARIGATE), *command, "--config", str(bot)]
    return subprocess.run(argv, input="", capture_output=True, text=True, env=env, timeout=120)


async def test_the_servers_own_name_of_a_prefixed_tool_asks_before_it_runs(tmp_path: Path) -> None:
    model = scripted({"tool_calls": [{"name": "h_ping", "args": {}}]}, {"content": "Done."})
    settings = AgentSettings(
        checkpointer_url="memory://",
        mcp_servers={"h": ping_server(tmp_path, prefix=True)},
        require_approval={"ping": ["approve", "reject"]},
    )
    agent = await ClarifyingAgent.create(settings, model=model)
    try:
        out = await agent.run_turn("t", "ping it")
    finally:
        await agent.aclose()
    assert out.request is not None and "h_ping" in out.request.question, out
    assert not [m for m in model.calls[-1] if isinstance(m, ToolMessage)], "the tool ran unasked"


@pytest.mark.parametrize(
    ("setting", "line"),
    [
        (
            {"require_approval": {"pnig": None}},
            "agent.require_approval: no tool is named 'pnig' (closest: ping)",
        ),
        ({"idempotent_tools": ("pnig",)}, "agent.idempotent_tools: no tool is named 'pnig' (closest: ping)"),
    ],
)
async def test_a_misspelt_tool_name_stops_the_start_with_the_closest(
    tmp_path: Path, setting: dict[str, Any], line: str
) -> None:
    settings = AgentSettings(
        checkpointer_url="memory://", mcp_servers={"h": ping_server(tmp_path)}, **setting
    )
    with pytest.raises(SettingsDoNotApply) as refused:
        await ClarifyingAgent.create(settings, model=scripted({"content": "Done."}))
    assert refused.value.lines == [line]


async def test_a_name_two_prefixed_servers_offer_is_refused_naming_both(tmp_path: Path) -> None:
    servers = {"g": ping_server(tmp_path, prefix=True), "h": ping_server(tmp_path, prefix=True)}
    settings = AgentSettings(checkpointer_url="memory://", mcp_servers=servers, require_approval=["ping"])
    with pytest.raises(SettingsDoNotApply) as refused:
        await ClarifyingAgent.create(settings, model=scripted({"content": "Done."}))
    assert refused.value.lines == [
        "agent.require_approval: 'ping' is a tool of several MCP servers (offered as g_ping, h_ping): "
        "write the one(s) to ask for"
    ]


def test_serve_and_chat_stop_on_it_as_on_other_settings(tmp_path: Path) -> None:
    agent = {"mcp_servers": {"h": ping_server(tmp_path, prefix=True)}, "require_approval": ["pnig"]}
    line = "agent.require_approval: no tool is named 'pnig' (closest: h_ping)"
    serve = run_cli(tmp_path, agent, "serve", "--host", "127.0.0.1", "--port", "0")
    assert serve.returncode == ExitCode.CONFIG, serve.stderr
    assert [e for e in serve.stderr.splitlines() if " ERROR " in e][0].endswith(f"cannot start: {line}")
    chat = run_cli(tmp_path, agent, "chat")
    assert chat.returncode == 1
    assert chat.stderr.endswith(f"clarigate chat: the agent could not start: {line}\n"), chat.stderr


def test_doctor_names_a_name_of_no_tool_and_says_what_a_servers_own_name_gates(tmp_path: Path) -> None:
    agent = {"mcp_servers": {"h": ping_server(tmp_path, prefix=True)}, "require_approval": ["ping", "pnig"]}
    done = run_cli(tmp_path, agent, "doctor")
    lines = done.stdout.splitlines()
    assert done.returncode == 1, done.stdout
    assert [line for line in lines if line.startswith("PROBLEM")] == [
        "PROBLEM settings: agent.require_approval: no tool is named 'pnig' (closest: h_ping)"
    ]
    assert "note    settings: agent.require_approval: 'ping' gates h_ping (the server's ping)" in lines


def test_doctor_leaves_a_name_a_silent_server_may_offer_to_a_note(tmp_path: Path) -> None:
    gone = {"transport": "stdio", "command": sys.executable, "args": ["-c", "raise SystemExit(3)"]}
    agent = {"mcp_servers": {"h": ping_server(tmp_path), "gone": gone}, "require_approval": ["pnig"]}
    done = run_cli(tmp_path, agent, "doctor")
    problems = [line for line in done.stdout.splitlines() if line.startswith("PROBLEM")]
    assert done.returncode == 1 and len(problems) == 1 and "'gone'" in problems[0], done.stdout
    assert (
        "note    settings: agent.require_approval: 'pnig' not checked: "
        "an MCP server that did not answer may offer it"
    ) in done.stdout.splitlines()
