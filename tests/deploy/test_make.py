"""``make chat`` installs what running needs; test and lint tools come only with ``make test``/``lint``."""

from __future__ import annotations

import os
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAKEFILE = (REPO / "Makefile").read_text()


def planned(target: str, tmp_path: Path) -> str:
    """What ``make -n target`` would run on a machine with no virtualenv yet."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    # not make's own "Entering directory" lines when the suite itself runs under `make test`
    environ = {k: v for k, v in os.environ.items() if k not in ("MAKELEVEL", "MAKEFLAGS", "MFLAGS")}
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", target, f"VENV={tmp_path / 'venv'}"],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        check=True,
    )
    return result.stdout


def test_make_chat_installs_only_the_runtime(tmp_path):
    plan = planned("chat", tmp_path)
    assert "pip install --quiet -e .\n" in plan and "[dev]" not in plan
    assert "platform_dist" not in plan
    assert plan.rstrip().endswith("clarigate chat")


@pytest.mark.parametrize("target", ["test", "lint"])
def test_make_test_and_lint_install_the_dev_tools(tmp_path, target):
    plan = planned(target, tmp_path)
    assert "pip install --quiet -e '.[dev]'" in plan
    # the test platform installed as a distribution (its entry point found on the tests'
    # sys.path), into a folder of its own: not into the environment clarigate serve runs from
    assert "pip install --quiet --no-deps --target .cache/test-platform ./tests/platform_dist" in plan
    assert "pip uninstall --quiet --yes clarigate-parrot" in plan  # where an older install put it
    installs = [line for line in plan.splitlines() if "pip install" in line and "platform_dist" in line]
    assert len(installs) == 1


def test_the_tests_put_the_test_platforms_folder_on_their_path():
    folder = next(line for line in MAKEFILE.splitlines() if line.startswith("TEST_PLATFORM ="))
    configured = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert configured["pythonpath"] == [folder.split("=", 1)[1].strip()]
