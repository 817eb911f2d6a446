"""The ports ``serve`` listens on: the HTTP port (``--port`` / PORT) and ``metrics_port``, each
named when it cannot be used, and never shared without a word."""

from __future__ import annotations

import socket
import sys
import urllib.error
import urllib.request
from pathlib import Path

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.preflight import ExitCode

from .served import START_SECONDS, Served, free_port, operator_env


def the_error(lines: list[str]) -> str:
    errors = [line for line in lines if " ERROR " in line]
    assert len(errors) == 1, lines
    return errors[0]


def status_of(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 (our own port)
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def test_metrics_port_equal_to_the_http_port_is_refused_naming_metrics_port(tmp_path: Path) -> None:
    """Both sockets used to be bound (SO_REUSEADDR lets two sockets bind one port while neither
    listens); the metrics server listened first and answered /healthz 404, for good."""
    port = free_port()
    env = operator_env(tmp_path, PORT=str(port), CLARIGATE_METRICS_PORT=str(port))
    served = Served(["serve", "--host", "127.0.0.1"], env, tmp_path)
    code = served.wait(START_SECONDS - 30)  # it stops at once: not running until killed
    assert code == ExitCode.CONFIG, served.output
    error = the_error(served.lines)
    assert f"cannot start: metrics_port {port} is the HTTP port (--port / PORT) too" in error, error


def test_a_metrics_port_in_use_is_named_as_metrics_port(clean_environment, monkeypatch, capsys) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        monkeypatch.setenv("CLARIGATE_METRICS_PORT", str(port))
        assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.PORT
    error = the_error(capsys.readouterr().err.splitlines())
    assert f"port {port} on 127.0.0.1 is in use: stop what holds it, or set metrics_port" in error, error


#: ``serve`` in a process where, while it waits for its stores (after binding its port), another
#: socket binds the same port as a second ``serve`` would (SO_REUSEADDR) and listens first.
_TAKEN_WHILE_WAITING = """
import socket, sys
from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime import serve

port = int(sys.argv[1])

async def another_serve_listens_meanwhile(config, durability=True):
    other = socket.socket()
    other.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    other.bind(("127.0.0.1", port))
    other.listen()
    serve.held = other

serve._wait_for_stores = another_serve_listens_meanwhile
sys.exit(main(["serve", "--host", "127.0.0.1", "--port", str(port)]))
"""


def test_a_port_another_process_listens_on_since_it_was_bound_is_refused(tmp_path: Path) -> None:
    """Two ``serve`` on one host and port, started within each other's start-up: the second bind
    succeeds while the first waits for Redis; the one that listens second used to serve on a
    socket no connection reaches (uvloop says nothing), alive and deaf. It stops instead (exit 8)."""
    port = free_port()
    command = [sys.executable, "-c", _TAKEN_WHILE_WAITING, str(port)]
    served = Served([], operator_env(tmp_path), tmp_path, command=command)
    code = served.wait(START_SECONDS - 30)
    assert code == ExitCode.PORT, served.output
    assert f"port {port} on 127.0.0.1 is in use: stop what holds it, or set --port / PORT" in the_error(
        served.lines
    )


def test_metrics_port_serves_metrics_and_the_http_port_the_rest(tmp_path: Path) -> None:
    port, metrics_port = free_port(), free_port()
    env = operator_env(tmp_path, PORT=str(port), CLARIGATE_METRICS_PORT=str(metrics_port))
    served = Served(["serve", "--host", "127.0.0.1"], env, tmp_path)
    try:
        assert served.wait_for_line("Application startup complete"), served.output
        assert status_of(f"http://127.0.0.1:{port}/healthz") == 200
        assert status_of(f"http://127.0.0.1:{metrics_port}/metrics") == 200
        assert status_of(f"http://127.0.0.1:{port}/metrics") == 404
    finally:
        assert served.stop() == 0, served.output
