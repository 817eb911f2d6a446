"""The distribution as pip installs it (not editable): one top-level import name, ``clarigate``.

A LangGraph user's own project keeps its graph in a package called ``agent`` (LangGraph's
template: ``src/agent/graph.py``); with that package on ``PYTHONPATH``, ``clarigate chat`` and
``clarigate serve`` must run the user's graph, not trip over a package of ours by that name.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import tomllib
from pathlib import Path

import httpx
import pytest

from tests.adapters.slack.fake_slack import BOT_TOKEN, FakeSlack
from tests.adapters.slack.slack_user import SIGNING_SECRET, signed_headers
from tests.deploy.test_processes import fake_slack, slack_dm  # noqa: F401
from tests.deploy.test_sigterm import free_port, wait_until

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())

USER_GRAPH = '''
"""A user's own graph, in a package named ``agent`` as LangGraph's project template has it."""
from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph


def reply(state: MessagesState):
    return {"messages": [AIMessage(f"my own agent package heard: {state['messages'][-1].content}")]}


builder = StateGraph(MessagesState)
builder.add_node("reply", reply)
builder.add_edge(START, "reply")
graph = builder.compile()
'''


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh virtual environment with the project installed from a copy of its sources, as a
    wheel would install it; the dependencies come from this environment (a .pth line), so the
    install needs no package index."""
    root = tmp_path_factory.mktemp("install")
    source = root / "source"
    source.mkdir()
    for name in ("pyproject.toml", PYPROJECT["project"]["readme"], "LICENSE"):
        shutil.copy(REPO / name, source / name)
    for folder in {path.split("/")[0] for path in PYPROJECT["tool"]["setuptools"]["package-dir"].values()}:
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    env = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    site = Path(
        subprocess.run(
            [str(env / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    install = [sys.executable, "-m", "pip", "--python", str(env / "bin" / "python"), "install", "--quiet"]
    install += ["--no-deps", "--no-build-isolation", "--no-index", str(source)]
    subprocess.run(install, check=True, capture_output=True, text=True, timeout=300)
    return env


def site_packages(env: Path) -> Path:
    (site,) = (env / "lib").glob("python3*/site-packages")
    return site


def test_the_only_top_level_package_installed_is_clarigate(venv: Path) -> None:
    site = site_packages(venv)
    ours = {path.name for path in site.iterdir() if not path.name.endswith((".dist-info", ".pth"))}
    assert ours == {"clarigate"}
    (info,) = site.glob("clarigate-*.dist-info")
    # what pip wrote: the package, its metadata and the console script (../../../bin/clarigate)
    written = {line.split(",")[0].split("/")[0] for line in (info / "RECORD").read_text().splitlines()}
    assert written == {"clarigate", info.name, ".."}
    probe = (
        "import importlib.util as u; print([n for n in ('agent', 'gateway', 'adapters') if u.find_spec(n)])"
    )
    shown = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-I",
            "-c",
            f"import clarigate; {probe}; print(clarigate.__version__)",
        ],
        capture_output=True,
        text=True,
        cwd=venv,
    )
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.split() == ["[]", PYPROJECT["project"]["version"]]


def test_every_package_folder_is_in_the_distribution(venv: Path) -> None:
    installed = site_packages(venv) / "clarigate"
    for name, folder in PYPROJECT["tool"]["setuptools"]["package-dir"].items():
        for init in (REPO / folder).rglob("__init__.py"):
            relative = init.relative_to(REPO / folder)
            if name != "clarigate" and "_clarigate" not in relative.parts:
                target = installed.joinpath(*name.split(".")[1:], relative)
                assert target.exists(), (
                    f"{init.relative_to(REPO)} is not installed: list it in pyproject.toml"
                )


def test_the_version_command_names_the_installed_version(venv: Path) -> None:
    shown = subprocess.run([str(venv / "bin" / "clarigate"), "--version"], capture_output=True, text=True)
    assert (shown.returncode, shown.stdout.strip()) == (0, f"clarigate {PYPROJECT['project']['version']}")


@pytest.fixture
def user_project(tmp_path: Path) -> Path:
    """A user's project: ``agent/graph.py`` and a bot file naming ``agent.graph:graph``."""
    package = tmp_path / "project" / "agent"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "graph.py").write_text(textwrap.dedent(USER_GRAPH))
    (tmp_path / "project" / "bot.yaml").write_text("agent:\n  graph: agent.graph:graph\n")
    return tmp_path / "project"


def user_environment(project: Path, **extra: str) -> dict[str, str]:
    """The environment a user runs clarigate in: their project on PYTHONPATH, nothing of ours."""
    keep = {k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))}
    keep = {k: v for k, v in keep.items() if k not in ("REDIS_URL", "LLM_MODEL", "LANGGRAPH_URL")}
    return {**keep, "PYTHONPATH": str(project), "CLARIGATE_DATA_DIR": str(project / "data"), **extra}


def test_a_user_graph_in_a_package_named_agent_runs_in_the_terminal_chat(
    venv: Path, user_project: Path
) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "clarigate"), "chat", "--config", str(user_project / "bot.yaml")],
        input="hello there\n",
        capture_output=True,
        text=True,
        cwd=user_project,
        env=user_environment(user_project),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "my own agent package heard: hello there" in done.stdout


def test_a_user_graph_in_a_package_named_agent_answers_through_serve(
    venv: Path,
    user_project: Path,
    fake_slack: FakeSlack,  # noqa: F811
) -> None:
    port = free_port()
    env = user_environment(
        user_project,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=fake_slack.api_url,
    )
    command = [str(venv / "bin" / "clarigate"), "serve", "--config", str(user_project / "bot.yaml")]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        command, cwd=user_project, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    url = f"http://127.0.0.1:{port}"
    try:

        def healthy() -> bool:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            try:
                return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, 180, "clarigate serve to answer /healthz")
        body = slack_dm("hello from slack", "EvInstall1")
        headers = {"Content-Type": "application/json", **signed_headers(body, SIGNING_SECRET)}
        assert httpx.post(f"{url}/slack/events", content=body, headers=headers).status_code == 200
        replies = wait_until(
            lambda: [
                c.params.get("text")
                for c in fake_slack.calls
                if c.method in ("chat.postMessage", "chat.update")
                and "my own agent package heard" in str(c.params.get("text"))
            ],
            60,
            "the user's graph's reply at the fake Slack",
        )
        assert replies[0] == "my own agent package heard: hello from slack"
    finally:
        proc.terminate()
        proc.wait(timeout=60)
