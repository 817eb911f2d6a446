"""The operator's agent settings through the whole gateway: YAML and environment, approvals by
click and by typing, images, token metrics, ``clarigate chat --config`` and ``doctor``."""

from __future__ import annotations

import io
import logging
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import REGISTRY

from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import AgentSettings
from clarigate.gateway.boundary.messages import Attachment
from clarigate.gateway.cli.main import main
from clarigate.gateway.runners.in_process import LangGraphRunner
from clarigate.gateway.runtime.config import ENV_NAMES, load_config
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import user_graphs

DELETE_TURN = {"tool_calls": [{"name": "delete_records", "args": {"table": "users", "limit": 5}}]}
USAGE = {"input_tokens": 12, "output_tokens": 3}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    for name in [*ENV_NAMES, "CLARIGATE_CONFIG"]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    user_graphs.RAN.clear()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def _script(tmp_path: Path, *turns: dict[str, Any]) -> str:
    path = tmp_path / "script.yaml"
    path.write_text(yaml.safe_dump(list(turns)), encoding="utf-8")
    return f"scripted:{path}"


def _bot(tmp_path: Path, agent: dict[str, Any]) -> Path:
    bot = tmp_path / "bot.yaml"
    bot.write_text(yaml.safe_dump({"agent": {"checkpointer_url": "memory://", **agent}}), encoding="utf-8")
    return bot


def test_agent_settings_from_yaml_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bot = _bot(
        tmp_path,
        {
            "instructions": "Be brief.",
            "tools": ["tests.agent.user_graphs:lookup"],
            "mcp_servers": {"notes": {"transport": "stdio", "command": "python", "args": ["-m", "notes"]}},
            "require_approval": ["delete_records"],
            "max_model_calls": 8,
        },
    )
    settings = load_config(str(bot)).agent_settings()
    assert settings.tools == ("tests.agent.user_graphs:lookup",)
    assert settings.require_approval == {"delete_records": None}
    assert settings.max_model_calls == 8 and settings.instructions == "Be brief."
    assert settings.mcp_servers["notes"]["command"] == "python"
    monkeypatch.setenv(
        "CLARIGATE_AGENT__TOOLS", "tests.agent.user_graphs:lookup,tests.agent.user_graphs:delete_records"
    )
    monkeypatch.setenv("CLARIGATE_AGENT__REQUIRE_APPROVAL", '{"delete_records": ["approve", "reject"]}')
    monkeypatch.setenv("CLARIGATE_AGENT__MAX_TOOL_CALLS", "4")
    monkeypatch.setenv("ALLOW_CLARIFICATION", "true")
    settings = load_config(str(bot)).agent_settings()
    assert len(settings.tools) == 2 and settings.max_tool_calls == 4
    assert settings.require_approval == {"delete_records": ["approve", "reject"]}
    assert settings.allow_clarification is True  # the same switch as the library's AgentSettings.from_env
    assert AgentSettings.from_env({"ALLOW_CLARIFICATION": "true"}).allow_clarification is True


async def test_approval_by_click_runs_the_tool_once_and_counts_tokens(
    tmp_path: Path, make_gateway: Any
) -> None:
    model = _script(tmp_path, {**DELETE_TURN, "usage": USAGE}, {"content": "Deleted.", "usage": USAGE})
    settings = AgentSettings(
        model=model,
        checkpointer_url="memory://",
        tools=("tests.agent.user_graphs:delete_records",),
        require_approval={"delete_records": ["approve", "reject"]},
    )
    before = _input_tokens()
    runner = LangGraphRunner(settings)
    try:
        gateway, adapter = await make_gateway(MemoryStore("own-agent"), runner)
        await adapter.say("clean up users")
        await gateway.drain()
        question = adapter.last_request().request
        assert question.clarification_type == "risk_confirmation" and user_graphs.RAN == []
        assert [o.label for o in question.options] == ["Approve", "Reject"]
        outcome = await adapter.click(0)
        assert outcome.accepted
        await gateway.drain()
        second = await adapter.click(0)  # a second click answers nothing
        await gateway.drain()
        assert not second.accepted
        assert user_graphs.RAN == ["delete users 5"]
        assert adapter.texts()[-1] == "Deleted."
    finally:
        await runner.aclose()
    assert _input_tokens() == before + 24


def _input_tokens() -> float:
    """Input tokens counted so far, over every model label."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        if metric.name == "clarigate_llm_tokens"
        for sample in metric.samples
        if sample.name == "clarigate_llm_tokens_total" and sample.labels.get("direction") == "input"
    )


async def test_typing_something_else_closes_the_approval_and_the_tool_never_runs(
    tmp_path: Path, make_gateway: Any
) -> None:
    """A typed message that is not an option is a new message (the core's rule for every
    question): the approval closes and is rejected as superseded (the model's answer to that is
    not shown), the tool does not run, and the agent reads the words next."""
    model = _script(
        tmp_path,
        DELETE_TURN,
        {"content": "(the superseded run: not shown)"},
        {"content": "You said: {last_user}"},
        DELETE_TURN,
        {"content": "Done."},
    )
    settings = AgentSettings(
        model=model,
        checkpointer_url="memory://",
        tools=("tests.agent.user_graphs:delete_records",),
        require_approval={"delete_records": None},
    )
    runner = LangGraphRunner(settings)
    try:
        gateway, adapter = await make_gateway(MemoryStore("own-agent-2"), runner)
        await adapter.say("clean up users")
        await gateway.drain()
        await adapter.reply("no, those are real customers")
        await gateway.drain()
        assert user_graphs.RAN == []
        assert adapter.texts()[-1] == "You said: no, those are real customers"
        assert "(the superseded run: not shown)" not in adapter.texts()
        assert adapter.closed()  # the approval's message was closed
        # a typed "Approve" answers a later approval once confirmed, as a click in a dialog would
        await adapter.say("clean up users again")
        await gateway.drain()
        await adapter.reply("approve")
        await gateway.drain()
        assert user_graphs.RAN == [] and adapter.texts()[-1].startswith("Reply “confirm” to go ahead")
        await adapter.reply("confirm")
        await gateway.drain()
        assert user_graphs.RAN == ["delete users 5"] and adapter.texts()[-1] == "Done."
    finally:
        await runner.aclose()


async def test_images_reach_the_runner_within_the_cap(make_gateway: Any) -> None:
    runner = ScriptedRunner()
    gateway, adapter = await make_gateway(MemoryStore("own-agent-3"), runner)
    adapter.files = {"f1": b"\x89PNG small", "f2": b"x" * 2000, "f3": b"%PDF"}
    attachments = [
        Attachment(kind="image", name="a.png", mime_type="image/png", size=10, ref="f1"),
        Attachment(kind="image", name="big.png", mime_type="image/png", ref="f2"),
        Attachment(kind="file", name="doc.pdf", mime_type="application/pdf", size=4, ref="f3"),
    ]
    gateway.config.agent.max_image_bytes = 1000
    await adapter.say("what is this?", attachments=attachments)
    await gateway.drain()
    turn = runner.calls[-1]
    assert [(i.name, i.data) for i in turn.images] == [("a.png", b"\x89PNG small")]
    assert "doc.pdf" in turn.text  # other files are described
    assert "f3" not in adapter.fetched  # never downloaded


def test_chat_with_config_uses_tools_and_approvals(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    model = _script(tmp_path, DELETE_TURN, {"content": "Deleted."})
    bot = _bot(
        tmp_path,
        {
            "model": model,
            "tools": ["tests.agent.user_graphs:delete_records"],
            "require_approval": {"delete_records": ["approve", "reject"]},
        },
    )
    monkeypatch.setattr(sys, "stdin", io.StringIO("clean up users\nApprove\nconfirm\n/quit\n"))
    assert main(["chat", "--config", str(bot)]) == 0
    out = capsys.readouterr().out
    assert "delete_records" in out and "Approve" in out and "bot> Deleted." in out
    assert user_graphs.RAN == ["delete users 5"]


def test_doctor_starts_each_mcp_server(tmp_path: Path, capfd: Any) -> None:
    """(capfd: the stdio client hands the server a real stderr file.)"""
    server = str(Path(__file__).parents[2] / "agent" / "mcp_notes_server.py")
    bot = _bot(
        tmp_path,
        {
            "mcp_servers": {
                "notes": {
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": [server, str(tmp_path / "n")],
                },
                "broken": {
                    "transport": "stdio",
                    "command": sys.executable,
                    "args": ["-c", "raise SystemExit(1)"],
                },
            }
        },
    )
    assert main(["doctor", "--config", str(bot)]) == 1
    out = capfd.readouterr().out
    assert "ok      mcp: server 'notes': 2 tool(s) (add_note, count_notes)" in out
    assert "PROBLEM mcp: MCP server 'broken'" in out


def test_serve_stops_at_start_naming_an_mcp_server_that_does_not_start(tmp_path: Path, capsys: Any) -> None:
    bot = _bot(
        tmp_path,
        {"mcp_servers": {"tickets": {"transport": "streamable_http", "url": "http://127.0.0.1:9/mcp"}}},
    )
    assert (
        main(["serve", "--config", str(bot), "--port", "0"]) == 6
    )  # ExitCode.MODEL: the agent could not start
    err = capsys.readouterr().err
    assert "the agent could not start: MCP server 'tickets'" in err and "Traceback" not in err


MISSPELT = {"files": {"transport": "stdio", "comand": "python", "args": ["-m", "my_mcp_server"]}}
#: What stops the start: the server and the key, with the setting it likely meant.
MISSPELT_SAID = "agent.mcp_servers: MCP server 'files': 'comand' is not a setting (did you mean `command`?)"


def test_serve_refuses_a_misspelt_mcp_server_setting_naming_it(
    tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    bot = _bot(tmp_path, {"mcp_servers": MISSPELT})
    assert main(["serve", "--config", str(bot), "--port", "0"]) == 2  # ExitCode.CONFIG
    err = capsys.readouterr().err
    assert MISSPELT_SAID in err and "Traceback" not in err
    # the same from the environment, without a config file
    monkeypatch.setenv("CLARIGATE_AGENT__MCP_SERVERS", '{"tickets": {"url": "https://x/mcp", "header": {}}}')
    assert main(["serve", "--port", "0"]) == 2
    assert (
        "MCP server 'tickets': 'header' is not a setting (did you mean `headers`?)" in capsys.readouterr().err
    )


def test_doctor_names_a_misspelt_mcp_server_setting(tmp_path: Path, capsys: Any) -> None:
    bot = _bot(tmp_path, {"mcp_servers": MISSPELT})
    assert main(["doctor", "--config", str(bot)]) == 1
    assert f"PROBLEM config: invalid configuration: {MISSPELT_SAID}" in capsys.readouterr().out
