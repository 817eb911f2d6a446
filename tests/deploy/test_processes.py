"""``serve``'s shapes on a real Redis: a web process and the worker process it starts (``role:
auto``, the default with Redis), one process (``all``), or separate ``web`` and ``worker`` serves.

The web process acks and enqueues, the worker runs and replies; health, readiness and metrics
on the one port are the whole replica's; SIGTERM drains both; the web process dying ends its
workers (a worker dying is started again: test_worker_restarts.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from clarigate.gateway.runtime.preflight import ExitCode
from tests.adapters.slack.fake_slack import APP_TOKEN, BOT_TOKEN, TEAM_ID, FakeSlack
from tests.adapters.slack.slack_user import SIGNING_SECRET, signed_headers
from tests.deploy.test_sigterm import (  # noqa: F401
    REDIS_URL,
    REPLY_KINDS,
    REPO,
    bot,
    free_port,
    records,
    serve_command,
    wait_until,
)


def children(pid: int) -> list[int]:
    """The processes ``pid`` started that are still there."""
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(c) for c in (task / "children").read_text().split()]
    return found


def gone(pid: int) -> bool:
    """True once ``pid`` has exited (a zombie counts: it runs nothing)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def command_line(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")


@pytest.fixture
def fake_slack() -> Iterator[FakeSlack]:
    """The tests' fake Slack Web API, served from a thread of its own (serve calls it while the
    test waits synchronously)."""
    fake = FakeSlack()
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(fake.start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(10)
    yield fake
    asyncio.run_coroutine_threadsafe(fake.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def slack_dm(text: str, event_id: str) -> bytes:
    event = {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": text}
    event["ts"] = f"{time.time():.6f}"
    body = {"team_id": TEAM_ID, "api_app_id": "A1", "event": event, "type": "event_callback"}
    body |= {"event_id": event_id, "event_time": int(time.time())}
    return json.dumps(body).encode()


def test_a_signed_slack_event_is_acked_by_the_web_process_and_answered_by_its_worker(bot, fake_slack):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SIGNING_SECRET,
        SLACK_API_URL=fake_slack.api_url,
        CLARIGATE_WORKER_PROCESSES="1",
    )
    (worker,) = children(proc.pid)
    assert "--role" in command_line(worker) and "worker" in command_line(worker)

    body = slack_dm("hello from slack", "Ev1")
    headers = {"Content-Type": "application/json", **signed_headers(body, SIGNING_SECRET)}
    assert httpx.post(f"{url}/slack/events", content=body, headers=headers).status_code == 200
    replies = wait_until(
        lambda: [
            c
            for c in fake_slack.calls
            if c.method in ("chat.postMessage", "chat.update") and "Working" not in str(c.params.get("text"))
        ],
        30,
        "the reply at the fake Slack",
    )
    assert replies[0].params["channel"] == "D1"
    # the test platform says who sends: the worker process, on behalf of the replica
    httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "and here", "event_id": "t1"})
    sent_items = wait_until(lambda: [r for r in records(sent) if r["kind"] in REPLY_KINDS], 30, "the reply")
    assert (sent_items[0]["process"], sent_items[0]["pid"]) == (worker, proc.pid)

    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{url}/readyz").json() == {"status": "ready"}
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, proc.stdout.read().decode()
    assert gone(worker)


def test_only_the_web_process_opens_the_socket_mode_connection(bot, fake_slack):  # noqa: F811
    """Slack shares a Socket Mode app's events between its connections: one in a worker process
    would take events that then wait behind agent runs for their ack."""
    prefix, sent, launch = bot
    env = {"SLACK_BOT_TOKEN": BOT_TOKEN, "SLACK_APP_TOKEN": APP_TOKEN, "SLACK_API_URL": fake_slack.api_url}
    proc, url = launch(**env, CLARIGATE_WORKER_PROCESSES="2")
    assert len(children(proc.pid)) == 2  # the worker processes are up (serve answers once they are)
    wait_until(lambda: fake_slack.sockets, 30, "the web process's Socket Mode connection")

    assert len([c for c in fake_slack.calls if c.method == "apps.connections.open"]) == 1
    assert httpx.get(f"{url}/healthz").json() == {"status": "ok"}


def test_the_web_process_killed_takes_its_worker_with_it(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="1")
    (worker,) = children(proc.pid)
    proc.kill()  # no drain: the worker must not go on holding (and renewing) jobs nobody answers for
    proc.wait(timeout=30)
    wait_until(lambda: gone(worker), 10, "the worker process to exit")


def test_health_names_a_worker_process_that_stopped_answering(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="1")
    (worker,) = children(proc.pid)
    os.kill(worker, signal.SIGSTOP)  # hung: alive, answering nothing
    try:
        health = httpx.get(f"{url}/healthz", timeout=10)
        ready = httpx.get(f"{url}/readyz", timeout=10)
    finally:
        os.kill(worker, signal.SIGCONT)
    assert (health.status_code, health.json()["failed"]) == (503, {"worker": "not answering"})
    assert (ready.status_code, ready.json()["failed"]) == (503, {"worker": "not answering"})
    assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}


def test_with_the_langgraph_server_down_webhooks_are_queued_at_once_and_readiness_names_it(bot):  # noqa: F811
    """The port opens while the worker process still waits for the server (the SDK retries it),
    messages are accepted and queued meanwhile; then the worker answers for itself in time,
    naming the server, and the replica logs the state once, not on every probe."""
    prefix, sent, launch = bot
    where = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    proc, url = launch(started=False, LANGGRAPH_URL=where, CLARIGATE_WORKER_PROCESSES="1")
    said = httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello", "event_id": "q1"}, timeout=10)
    assert said.json() == {"outcome": "accepted"}
    # accepted before the worker process had started
    assert httpx.get(f"{url}/readyz", timeout=10).json()["starting"] == {"worker": "starting"}

    server_down = {"agent_server": f"unreachable ({where})"}
    wait_until(
        lambda: httpx.get(f"{url}/readyz", timeout=10).json().get("failed") == server_down,
        120,
        "the worker process to say the LangGraph server is down",
    )
    for _ in range(4):  # the worker answers in time: never "not answering"
        ready = httpx.get(f"{url}/readyz", timeout=10)
        assert (ready.status_code, ready.json()["failed"]) == (503, server_down)
    assert httpx.get(f"{url}/healthz", timeout=10).json() == {"status": "ok"}  # alive, not ready
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0
    output = proc.stdout.read().decode()
    assert "Traceback" not in output
    assert len([line for line in output.splitlines() if "not ready: agent_server" in line]) == 1, output


def test_a_stop_while_the_worker_process_starts_is_a_clean_stop(bot):  # noqa: F811
    prefix, sent, launch = bot
    where = f"http://127.0.0.1:{free_port()}"  # the worker's start waits for it a while
    proc, url = launch(started=False, LANGGRAPH_URL=where, CLARIGATE_WORKER_PROCESSES="2")
    assert httpx.get(f"{url}/readyz", timeout=10).json()["starting"] == {
        "worker 1": "starting",
        "worker 2": "starting",
    }
    workers = children(proc.pid)
    assert len(workers) == 1  # the second is started once the first has
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, proc.stdout.read().decode()
    assert all(gone(pid) for pid in workers)


def runs_started(url: str) -> float:
    """The replica's ``clarigate_runs_total{state="started"}`` (all its processes')."""
    text = httpx.get(f"{url}/metrics", timeout=10).text
    found = re.search(r'^clarigate_runs_total\{[^}]*state="started"[^}]*\} (\S+)$', text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


def test_several_worker_processes_share_the_runs_and_stop_together(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_WORKER_PROCESSES="2", CLARIGATE_WORKERS="6")
    workers = children(proc.pid)
    assert len(workers) == 2 and all("worker" in command_line(pid) for pid in workers)

    said = 0
    while {r["process"] for r in records(sent) if r["kind"] in REPLY_KINDS} != set(workers):
        assert said < 40, "the replies all came from one worker process"
        httpx.post(f"{url}/test/say", json={"chat": f"c{said}", "text": "hello", "event_id": f"m{said}"})
        said += 1
        replied = lambda n=said: len([r for r in records(sent) if r["kind"] in REPLY_KINDS]) >= n  # noqa: E731
        wait_until(replied, 30, "a reply")
    replies = [r for r in records(sent) if r["kind"] in REPLY_KINDS]
    assert len(replies) == said and {r["pid"] for r in replies} == {proc.pid}  # one replica, once each
    assert runs_started(url) == said  # /metrics adds both processes' series up

    os.kill(workers[1], signal.SIGSTOP)  # hung: the replica's health names which one
    try:
        health = httpx.get(f"{url}/healthz", timeout=10)
    finally:
        os.kill(workers[1], signal.SIGCONT)
    assert (health.status_code, health.json()["failed"]) == (503, {"worker 2": "not answering"})

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 0, proc.stdout.read().decode()
    assert all(gone(pid) for pid in workers)


def test_role_all_keeps_everything_in_one_process(bot):  # noqa: F811
    prefix, sent, launch = bot
    proc, url = launch(CLARIGATE_ROLE="all")
    assert children(proc.pid) == []
    httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello", "event_id": "a1"})
    replies = wait_until(lambda: [r for r in records(sent) if r["kind"] in REPLY_KINDS], 30, "the reply")
    assert replies[0]["process"] == proc.pid


def test_web_and_worker_serves_of_one_bot_share_the_work(bot):  # noqa: F811
    prefix, sent, launch = bot
    web, web_url = launch(CLARIGATE_ROLE="web")
    worker, worker_url = launch(CLARIGATE_ROLE="worker")
    assert children(web.pid) == [] and children(worker.pid) == []
    assert httpx.post(f"{worker_url}/test/say", json={}).status_code == 404  # no webhooks there
    assert httpx.get(f"{web_url}/readyz").json() == {"status": "ready"}  # no agent there to be ready

    httpx.post(f"{web_url}/test/say", json={"chat": "c1", "text": "hello", "event_id": "w1"})
    replies = wait_until(lambda: [r for r in records(sent) if r["kind"] in REPLY_KINDS], 30, "the reply")
    assert replies[0]["process"] == worker.pid
    for proc in (web, worker):
        proc.send_signal(signal.SIGTERM)
    assert [web.wait(timeout=60), worker.wait(timeout=60)] == [0, 0]


def test_a_worker_process_that_cannot_start_gives_the_web_process_its_exit_status(tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))},
        "PYTHONPATH": str(REPO),
        "REDIS_URL": REDIS_URL,
        "CLARIGATE_BOT_ID": f"test-processes-{os.getpid()}",
        "LLM_MODEL": "no-such-provider:model",
        "CLARIGATE_WORKER_PROCESSES": "3",  # the first one says why; the others never start
        "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
    }
    cmd = serve_command(free_port())
    done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == ExitCode.MODEL
    errors = [line for line in done.stderr.splitlines() if " ERROR " in line]
    assert len(errors) == 1 and "the agent could not start" in errors[0], done.stderr
