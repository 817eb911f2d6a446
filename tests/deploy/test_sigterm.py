"""SIGTERM or SIGHUP mid-run: the replica finishes within its grace, or hands the job back; answered once.
SIGKILL mid-run: another replica claims the dead one's job and answers it once.

``clarigate serve`` runs as a real subprocess on the real Redis, with the offline model and a
small platform plugged in through ``extra_adapters``: it takes messages on ``POST /test/say``
and appends what the bot sends to a file, slowly (so a SIGTERM lands mid-job).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any, ClassVar, Self

import httpx
import pytest
from redis.asyncio import Redis
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageRef, Sender
from clarigate.gateway.boundary.outbound_items import Outbound
from clarigate.gateway.boundary.port import GatewayPort, PlatformAdapter
from clarigate.gateway.runtime.processes import serve_pid
from clarigate.gateway.store.redis import RedisStore

REPO = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
REPLY_KINDS = {"text", "clarification", "error"}


class FileRecordingAdapter(PlatformAdapter):
    """Platform ``test`` inside the served process: messages in over HTTP, sent items to a file."""

    platform: ClassVar[str] = "test"

    @classmethod
    def from_settings(cls, settings: Any, gateway: GatewayPort) -> Self:
        """Built by the registry (``extra_adapters``): it needs no settings of its own."""
        return cls(gateway)

    def __init__(self, gateway: GatewayPort) -> None:
        self.gateway = gateway
        self.record = Path(os.environ["RECORD_FILE"])
        self.slow = float(os.environ.get("SLOW_SECONDS", "0"))

    def routes(self) -> list:
        async def say(request: Request) -> JSONResponse:
            body = await request.json()
            conv = Conversation(platform="test", chat_id=body["chat"], is_direct=True)
            message = InboundMessage(
                conversation=conv, sender=Sender(user_id="u1"), text=body["text"], event_id=body["event_id"]
            )
            return JSONResponse({"outcome": (await self.gateway.accept(message)).value})

        return [Route("/test/say", say, methods=["POST"])]

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        with self.record.open("a", encoding="utf-8") as out:
            loop = type(asyncio.get_running_loop()).__module__  # which event loop serve runs on
            # pid: the replica's (its web process when runs have a process of their own);
            # process: the one sending
            record = {"pid": serve_pid(), "process": os.getpid(), "kind": item.kind, "loop": loop}
            out.write(json.dumps(record) + "\n")
        if item.kind == "progress" and getattr(item, "state", "") == "started":
            await asyncio.sleep(self.slow)  # the job is mid-run while this sleeps
        return MessageRef(platform="test", chat_id=conversation.chat_id, message_id=uuid.uuid4().hex)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def wait_until(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def serve_command(port: int) -> list[str]:
    """``clarigate serve`` on 127.0.0.1:``port``, run by this interpreter (the code under test)."""
    command = [sys.executable, "-m", "clarigate.gateway.cli.main", "serve"]
    return [*command, "--host", "127.0.0.1", "--port", str(port)]


@pytest.fixture
def bot(tmp_path):
    """Start ``clarigate serve`` with a fresh bot id; yields a launcher; keys and process cleaned up."""
    prefix = f"test-sigterm-{uuid.uuid4().hex[:10]}"
    procs: list[subprocess.Popen] = []

    def launch(started: bool = True, **env: str) -> tuple[subprocess.Popen, str]:
        port = free_port()
        environ = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))},
            "PYTHONPATH": str(REPO),
            "REDIS_URL": REDIS_URL,
            "CLARIGATE_BOT_ID": prefix,
            "LLM_MODEL": "offline",
            "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
            "CLARIGATE_EXTRA_ADAPTERS": json.dumps(["tests.deploy.test_sigterm:FileRecordingAdapter"]),
            "RECORD_FILE": str(tmp_path / "sent.jsonl"),
            "CLARIGATE_PROGRESS_AFTER_SECONDS": "0",  # the slow "working…" send is what keeps a run going
            **env,
        }
        cmd = serve_command(port)
        proc = subprocess.Popen(cmd, cwd=REPO, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"

        def healthy() -> bool:
            assert proc.poll() is None, proc.stdout.read().decode()
            try:
                return httpx.get(f"{url}/healthz", timeout=1).status_code == 200
            except httpx.HTTPError:
                return False

        wait_until(healthy, 60, "clarigate serve to answer /healthz")
        if started:  # the port opens at once; the worker processes start meanwhile

            def workers_started() -> bool:
                ready = httpx.get(f"{url}/readyz", timeout=5)
                starting = ready.json().get("starting") or {} if ready.status_code == 503 else {}
                return not any(why == "starting" for why in starting.values())

            wait_until(workers_started, 60, "the worker processes to start")
        return proc, url

    yield prefix, tmp_path / "sent.jsonl", launch
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    asyncio.run(_delete_prefix(prefix))


async def _delete_prefix(prefix: str) -> None:
    client = Redis.from_url(REDIS_URL)
    keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=500)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_mid_run_finishes_within_grace_and_exits_0(bot, stop):
    prefix, sent, launch = bot
    proc, url = launch(SLOW_SECONDS="1.5", CLARIGATE_SHUTDOWN_GRACE_SECONDS="20")
    said = httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello there", "event_id": "e1"})
    assert said.json() == {"outcome": "accepted"}
    wait_until(lambda: any(r["kind"] == "progress" for r in records(sent)), 30, "the run to start")

    proc.send_signal(stop)  # SIGHUP drains like SIGTERM (a closed terminal, some supervisors)
    assert proc.wait(timeout=60) == 0, proc.stdout.read().decode()

    replies = [r for r in records(sent) if r["kind"] in REPLY_KINDS]
    assert len(replies) == 1 and replies[0]["pid"] == proc.pid
    assert asyncio.run(_is_done(prefix, "test:e1"))
    assert replies[0]["loop"].startswith("uvloop")
    output = proc.stdout.read().decode()
    assert "POST /test/say" not in output  # no access log line per request


def test_sigterm_past_grace_hands_the_job_to_another_replica(bot):
    prefix, sent, launch = bot
    proc, url = launch(
        SLOW_SECONDS="60", CLARIGATE_SHUTDOWN_GRACE_SECONDS="0.2", CLARIGATE_STALE_CLAIM_SECONDS="1"
    )
    httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello there", "event_id": "e2"})
    wait_until(lambda: any(r["kind"] == "progress" for r in records(sent)), 30, "the run to start")

    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0, proc.stdout.read().decode()
    assert not [r for r in records(sent) if r["kind"] in REPLY_KINDS]  # it did not finish

    runner = ScriptedRunner()
    texts = asyncio.run(_second_replica_answers(prefix, runner))

    assert [c.text for c in runner.calls] == ["hello there"]
    assert texts == ["You said: hello there"]
    assert not [r for r in records(sent) if r["kind"] in REPLY_KINDS]


async def _second_replica_answers(prefix: str, runner: ScriptedRunner) -> list[str]:
    from clarigate.adapters.testing import TestAdapter
    from clarigate.gateway.flow.intake import Gateway
    from clarigate.gateway.runtime.config import GatewayConfig

    store = RedisStore(REDIS_URL, prefix)
    gateway = Gateway(GatewayConfig(stale_claim_seconds=0.3, workers=2), store, runner)
    adapter = TestAdapter(gateway)
    gateway.register(adapter)
    await gateway.start()
    try:
        await gateway.drain(timeout=20, inbound_ids=["test:e2"])  # accepted by the stopped replica
        return adapter.texts()
    finally:
        await gateway.stop(grace=1)
        await store.close()


async def _is_done(prefix: str, inbound_id: str) -> bool:
    store = RedisStore(REDIS_URL, prefix)
    try:
        return await store.is_done(inbound_id)
    finally:
        await store.close()


def test_a_killed_replica_leaves_its_job_to_another_answered_once(bot):
    prefix, sent, launch = bot
    proc, url = launch(SLOW_SECONDS="60", CLARIGATE_STALE_CLAIM_SECONDS="1")
    httpx.post(f"{url}/test/say", json={"chat": "c1", "text": "hello there", "event_id": "e2"})
    wait_until(lambda: any(r["kind"] == "progress" for r in records(sent)), 30, "the run to start")

    proc.kill()  # SIGKILL: no grace, no hand-back; the entry stays with the dead consumer
    proc.wait(timeout=30)

    runner = ScriptedRunner()
    texts = asyncio.run(_second_replica_answers(prefix, runner))

    assert [c.text for c in runner.calls] == ["hello there"]
    assert texts == ["You said: hello there"]
    assert not [r for r in records(sent) if r["kind"] in REPLY_KINDS]
