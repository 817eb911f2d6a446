"""``python -m gateway.terminal`` driven through its stdin, as a person would use it."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from agent.harness import AgentSettings
from gateway.terminal import chat_main

ROOT = Path(__file__).resolve().parents[2]


def chat(data_dir: Path, typed: str) -> subprocess.CompletedProcess[str]:
    """Run the terminal chat on the offline model with ``typed`` as its whole input."""
    env = {**os.environ, "CLARIGATE_DATA_DIR": str(data_dir), "LLM_MODEL": "offline"}
    env.pop("CHECKPOINTER_URL", None)
    return subprocess.run(
        [sys.executable, "-m", "gateway.terminal"],
        input=typed,
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=90,
    )


def test_form_and_option_flows_and_the_thread_survives_a_restart(tmp_path: Path) -> None:
    form = ["create a project", "", "atlas", "Klingon", "2", "maybe", "yes", "2026-12-01", ""]
    first = chat(tmp_path, "\n".join([*form, "which database?"]) + "\n")  # input ends, question open

    assert first.returncode == 0, first.stderr
    out = first.stdout
    assert "Tell me about the new project." in out
    assert "Language [1) Python  2) TypeScript  3) Go]" in out
    assert out.count("Project name (required): ") == 2  # empty required value: asked again
    assert out.count("Language [") == 2  # "Klingon" is not a choice: asked again
    assert out.count("Private repository [yes/no]") == 2  # "maybe" is not yes/no
    assert (
        "Created the project “atlas” in TypeScript (private, deadline 2026-12-01, team size not set)" in out
    )
    assert "  2. SQLite" in out
    assert (tmp_path / "terminal-thread").exists()

    second = chat(tmp_path, "2\n/quit\n")

    assert second.returncode == 0, second.stderr
    assert "still open" in second.stdout
    assert "Going with SQLite" in second.stdout


def test_new_starts_a_fresh_thread(tmp_path: Path) -> None:
    stdout = io.StringIO()
    thread_file = tmp_path / "thread"
    settings = AgentSettings(data_dir=str(tmp_path), checkpointer_url="memory://")

    code = chat_main(settings, io.StringIO("which database?\n/new\nSQLite\n"), stdout, thread_file)

    assert code == 0
    out = stdout.getvalue()
    assert "(new thread)" in out
    assert "Going with" not in out  # after /new, "SQLite" is a new one-word request, not an answer
    assert "What would you like me to do about “SQLite”?" in out


class _PressesCtrlC(io.StringIO):
    def readline(self, *args: object) -> str:
        raise KeyboardInterrupt


def test_ctrl_c_exits_cleanly(tmp_path: Path) -> None:
    settings = AgentSettings(data_dir=str(tmp_path), checkpointer_url="memory://")
    assert chat_main(settings, _PressesCtrlC(), io.StringIO(), tmp_path / "thread") == 0
