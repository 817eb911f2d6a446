"""Access lines (uvicorn's, one per request) at debug level only: probes, scrapes and webhooks.

At info a message shows in its own lines (received and queued, run, sends; deploy/README
"Logs") and requests in the metrics, so an access line per webhook would only cost each ack.
An operator who asks for ``--log-level debug`` sees every request, the probes' included.
"""

from __future__ import annotations

import urllib.request
from pathlib import Path

import pytest

from .served import Served, free_port, operator_env

PATHS = ("/healthz", "/readyz", "/metrics")


def requests_logged(tmp_path: Path, *flags: str) -> list[str]:
    """The access lines of one GET to each probe and to ``/metrics`` on its own port."""
    port, metrics_port = free_port(), free_port()
    env = operator_env(tmp_path, PORT=str(port), CLARIGATE_METRICS_PORT=str(metrics_port))
    served = Served(["serve", "--host", "127.0.0.1", *flags], env, tmp_path)
    try:
        assert served.wait_for_line("Application startup complete"), served.output
        for url in (f"http://127.0.0.1:{port}/healthz", f"http://127.0.0.1:{port}/readyz"):
            urllib.request.urlopen(url, timeout=10).read()  # noqa: S310 (our own port)
        urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read()  # noqa: S310
    finally:
        assert served.stop() == 0, served.output
    return [line for line in served.lines if "uvicorn.access" in line]


@pytest.mark.parametrize(
    ("flags", "logged"), [((), False), (("--log-level", "debug"), True)], ids=["info", "debug"]
)
def test_probes_and_scrapes_are_access_logged_at_debug_only(
    tmp_path: Path, flags: tuple[str, ...], logged: bool
) -> None:
    lines = requests_logged(tmp_path, *flags)
    for path in PATHS:
        assert any(f'"GET {path} HTTP/1.1" 200' in line for line in lines) is logged, (path, lines)
