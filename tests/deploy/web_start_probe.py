"""Run ``clarigate serve`` with a watcher inside the web process (``test_web_start.py``).

    python tests/deploy/web_start_probe.py REPORT_FILE serve --host … --port …

A thread of the web process holds every worker process it starts (SIGSTOP as soon as it has
become one, past its exec, so the replica's workers are "still starting" for as long as the test
wants), polls the web process's own ``/healthz`` and, on its first 200, writes to REPORT_FILE
which modules the process had imported by then and the held workers' pids; then it writes the
modules again every 0.1 s (``now``), so a test can look after a webhook was accepted too.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path


def children() -> set[int]:
    found: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            found |= {int(pid) for pid in (task / "children").read_text().split()}
        except OSError:  # the thread ended meanwhile
            continue
    return found


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:  # noqa: S310 (our own port)
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def is_worker(pid: int) -> bool:
    """True once the child runs the worker (``serve --role worker``): not while it is still the
    forked copy of this process before its exec, where a stop would leave this process waiting in
    ``subprocess.Popen`` for that exec for ever (its event loop with it)."""
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:  # gone already
        return False
    return any(a == b"--role" and b == b"worker" for a, b in zip(argv, argv[1:], strict=False))


def watch(report: Path, port: str) -> None:
    held: set[int] = set()
    first: list[str] | None = None
    while True:
        for pid in children() - held:
            if is_worker(pid):
                os.kill(pid, 19)  # SIGSTOP: the worker stays "starting"
                held.add(pid)
        if first is None and answers(f"http://127.0.0.1:{port}/healthz"):
            first = sorted(sys.modules)
        if first is not None:
            state = {"first": first, "now": sorted(sys.modules), "held": sorted(held)}
            partial = report.with_suffix(".tmp")
            partial.write_text(json.dumps(state))
            partial.replace(report)
        time.sleep(0.1 if first is not None else 0.005)


def main() -> int:
    report, argv = Path(sys.argv[1]), sys.argv[2:]
    port = argv[argv.index("--port") + 1]
    threading.Thread(target=watch, args=(report, port), daemon=True).start()
    from clarigate.gateway.cli.main import main as clarigate

    return clarigate(argv)


if __name__ == "__main__":
    sys.exit(main())
