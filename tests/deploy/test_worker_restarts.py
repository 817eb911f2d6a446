"""A worker process's death on a real ``serve``: the web process starts another and goes on
answering; only deaths in a row stop the replica. Its scheduling (nice 10 on its autogroup too)
and the one worker process ``memory://`` allows."""

from __future__ import annotations

import os
import re
import signal
from pathlib import Path

import httpx
import pytest

from clarigate.gateway.runtime.preflight import ExitCode
from clarigate.gateway.runtime.supervise import DEATH_LIMIT
from tests.deploy.test_processes import children, command_line, gone
from tests.deploy.test_sigterm import REPLY_KINDS, bot, records, wait_until  # noqa: F401


def worker_deaths(url: str) -> float:
    """The replica's ``clarigate_worker_process_deaths_total``."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.search(r"^clarigate_worker_process_deaths_total(?:\{[^}]*\})? (\S+)$", text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def another_child(pid: int, not_these: set[int]) -> int | None:
    """A process ``pid`` started that is none of ``not_these`` (and still there)."""
    new = [child for child in children(pid) if child not in not_these and not gone(child)]
    return new[0] if new else None


def test_a_killed_worker_process_is_started_again_while_the_replica_keeps_answering(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="1")
    (first,) = children(proc.pid)
    os.kill(first, signal.SIGKILL)  # the OOM killer, say

    health: list[int] = []

    def restarted() -> int | None:
        health.append(httpx.get(f"{url}/healthz", timeout=10).status_code)
        new = another_child(proc.pid, {first})
        return new if new and httpx.get(f"{url}/readyz", timeout=10).status_code == 200 else None

    second = wait_until(restarted, 120, "a new worker process, ready")
    assert proc.poll() is None and set(health) == {200}  # the web process answered all along
    assert "worker" in command_line(second)

    httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "after the death", "event_id": "r1"})
    replies = wait_until(lambda: [r for r in records(sent) if r["kind"] in REPLY_KINDS], 30, "the reply")
    assert [r["process"] for r in replies] == [second]
    assert worker_deaths(url) == 1
    log = proc.stdout
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    lines = [line for line in log.read().decode().splitlines() if f"worker process {first} exited" in line]
    assert len(lines) == 1 and "status -9: starting another" in lines[0]
    assert gone(second)


def test_worker_processes_that_keep_dying_stop_the_replica(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="1")
    killed: set[int] = set()
    for _ in range(DEATH_LIMIT):  # each new one killed as soon as it is there: a crash loop
        started = lambda: another_child(proc.pid, killed) or proc.poll() is not None  # noqa: E731
        worker = wait_until(started, 60, "a worker process")
        assert proc.poll() is None, "the replica stopped before the deaths were too many"
        os.kill(worker, signal.SIGKILL)
        killed.add(worker)
    assert proc.wait(timeout=60) == ExitCode.UNEXPECTED
    output = proc.stdout.read().decode()
    assert f"{DEATH_LIMIT} deaths within 60 s: the replica stops" in output
    assert output.count(": starting another in") == DEATH_LIMIT - 1


@pytest.mark.skipif(not Path("/proc/self/autogroup").exists(), reason="no autogroup scheduling here")
def test_worker_processes_yield_the_cpu_through_their_autogroup_too(bot):  # noqa: F811
    """Each worker process is a session of its own, so an autogroup of its own: the kernel
    weighs autogroups, and a worker's nice 10 counts only if its autogroup has it."""
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="2")
    for worker in children(proc.pid):
        assert Path(f"/proc/{worker}/autogroup").read_text().split()[-2:] == ["nice", "10"]


def test_a_memory_checkpointer_gets_one_worker_process_and_says_why(bot):  # noqa: F811
    """Two processes would each hold their own threads: a click on a question would reach the
    one without it and the question be asked again."""
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="2", CHECKPOINTER_URL="memory://")
    assert len(children(proc.pid)) == 1
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    warnings = [line for line in proc.stdout.read().decode().splitlines() if "memory://" in line]
    assert len(warnings) == 1 and " WARNING " in warnings[0] and "1 worker process, not 2" in warnings[0]
