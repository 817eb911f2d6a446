"""What ``clarigate serve`` says when it starts: where to reach it, and where the state is."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

REPO = Path(__file__).parents[3]
_PLATFORMS_AND_STORE = ("SLACK_", "FEISHU_", "TELEGRAM_", "CLARIGATE_", "REDIS_URL")


def _get_when_listening(proc: subprocess.Popen[str], url: str) -> httpx.Response:
    """GET ``url``, waiting (generously) for the server to listen; the process must not end."""
    deadline = time.monotonic() + 60
    while True:
        try:
            return httpx.get(url, timeout=5)
        except httpx.ConnectError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)


def test_the_start_says_where_the_http_server_listens(tmp_path: Path) -> None:
    """uvicorn says nothing when it is handed a bound socket: serve's own line names the address,
    the one way to find the port ``--port 0`` was given, and the health endpoints answer there."""
    environ = {
        **{k: v for k, v in os.environ.items() if not k.startswith(_PLATFORMS_AND_STORE)},
        "PYTHONPATH": str(REPO),
        "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
    }
    command = [
        sys.executable,
        "-m",
        "clarigate.gateway.cli.main",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
    ]
    proc = subprocess.Popen(
        command, cwd=REPO, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    seen: list[str] = []
    match = None
    try:
        assert proc.stdout is not None
        for line in proc.stdout:  # up to uvicorn's last start-up line, or the end of a failed start
            seen.append(line)
            match = match or re.search(
                r"HTTP on (http://127\.0\.0\.1:(\d+)) \(/healthz, /readyz, /metrics\)", line
            )
            if "Application startup complete" in line:
                break
        assert match is not None and match.group(2) != "0", "".join(seen)
        # no REDIS_URL: one line says so, as a warning (not a warning and then an info line)
        (no_redis,) = [line for line in seen if "REDIS_URL" in line]
        assert "WARNING" in no_redis and "embedded in-process store" in no_redis, "".join(seen)
        # no platform: how to try the agent, as a ``make …`` alone leaves it (``clarigate`` not on PATH)
        (no_platform,) = [line for line in seen if "no platform is enabled" in line]
        assert "run `make chat` (or `clarigate chat` in the virtual environment)." in no_platform
        for path in ("/healthz", "/readyz", "/metrics"):
            assert _get_when_listening(proc, match.group(1) + path).status_code == 200, path
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 0
