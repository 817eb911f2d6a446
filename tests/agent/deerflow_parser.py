"""DeerFlow's own human-input parsers (vendored in ``tests/agent/deerflow``), run on what
clarigate emits.

The TypeScript parser (DeerFlow's web client) is compiled with TypeScript and run in one node
process; the Python one (DeerFlow's backend) is imported from its file. ``python -m
tests.agent.deerflow_parser`` installs TypeScript under ``.cache/node`` (``make install-dev``).
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import IO, Any

HERE = Path(__file__).resolve().parent
VENDORED = HERE / "deerflow"
ROOT = HERE.parents[1]
NODE_TOOLS = ROOT / ".cache" / "node"
#: DeerFlow's frontend builds with typescript ^5.8.2
TYPESCRIPT_VERSION = "5.9.3"
TYPESCRIPT_DIR = NODE_TOOLS / "node_modules" / "typescript"


def typescript_installed() -> bool:
    manifest = TYPESCRIPT_DIR / "package.json"
    return manifest.is_file() and json.loads(manifest.read_text())["version"] == TYPESCRIPT_VERSION


def install_typescript() -> None:
    """TypeScript under ``.cache/node``, unless it is there already."""
    if typescript_installed():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: the DeerFlow parser test cannot compile its parser")
    command = [npm, "install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund"]
    subprocess.run([*command, "--prefix", str(NODE_TOOLS), f"typescript@{TYPESCRIPT_VERSION}"], check=True)


def python_parser() -> ModuleType:
    """DeerFlow's backend module ``deerflow.agents.human_input``."""
    spec = importlib.util.spec_from_file_location("deerflow_human_input", VENDORED / "human_input.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TypeScriptParser:
    """DeerFlow's ``human-input.ts``, compiled, in a node process answering one line per query."""

    def __init__(self, node: str) -> None:
        driver = HERE / "deerflow_parser.js"
        source = VENDORED / "human-input.ts"
        self._process = subprocess.Popen(
            [node, str(driver), str(TYPESCRIPT_DIR), str(source)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )
        ready = self._read()
        if "ready" not in ready:
            raise RuntimeError(f"the DeerFlow parser did not start: {ready}")
        self.exports: list[str] = ready["ready"]

    def _read(self) -> dict[str, Any]:
        stdout: IO[str] | None = self._process.stdout
        assert stdout is not None
        line = stdout.readline()
        if not line:
            raise RuntimeError(f"the DeerFlow parser stopped (exit {self._process.wait(timeout=30)})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def _ask(self, query: Mapping[str, Any]) -> dict[str, Any]:
        stdin = self._process.stdin
        assert stdin is not None
        # ensure_ascii: lone surrogates a model sends travel as escapes, as JSON allows
        stdin.write(json.dumps(query) + "\n")
        stdin.flush()
        return self._read()

    def request(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """``extractHumanInputRequest`` of a tool message: the request, or None if refused."""
        parsed: dict[str, Any] | None = self._ask({"request": message})["request"]
        return parsed

    def response(self, message: Mapping[str, Any]) -> dict[str, Any] | None:
        """``extractHumanInputResponse`` of a human message: the answer, or None if refused."""
        parsed: dict[str, Any] | None = self._ask({"response": message})["response"]
        return parsed

    def thread(self, messages: list[Mapping[str, Any]]) -> tuple[list[str], str | None]:
        """``deriveHumanInputThreadState``: the answered request ids and the open one."""
        state = self._ask({"thread": messages})
        return state["answered"], state["open"]

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=30)
        if self._process.stdout is not None:
            self._process.stdout.close()


if __name__ == "__main__":
    try:
        install_typescript()
    except (RuntimeError, subprocess.CalledProcessError) as error:
        print(f"TypeScript not installed ({error}): the DeerFlow parser test will not run", file=sys.stderr)
