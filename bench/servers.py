"""What the HTTP benchmarks run against, all on 127.0.0.1: ``clarigate serve`` with the Slack
adapter and a stub model of 1-2 s, the fake Slack Web API in a process of its own, a bare
slack-bolt app beside it (the ack path's baseline) and, with ``--own-redis``, a redis-server of
the benchmark's own. ``serve_beside_bolt`` starts them, waits until each answers, and stops them
and deletes serve's keys at the end. Used by ``http_e2e.py`` and ``ack_burst.py``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from clarigate.agent.models.scripted import ScriptedTurn  # noqa: E402
from tests.adapters.slack.fake_slack import BOT_TOKEN  # noqa: E402
from tests.adapters.slack.slack_user import SIGNING_SECRET  # noqa: E402

MODEL_TURN = ScriptedTurn(content="Done: {last_user}", delay_seconds=(1.0, 2.0))
TICKS = os.sysconf("SC_CLK_TCK")
FAKE_SLACK_NICENESS = 10
#: How long a server may take to answer at start (a busy machine took over 60 s once).
START_SECONDS = 180.0


class FakeSlackProcess:
    """``bench/fake_slack_app.py`` in its own process: its URL, the replies it saw, its calls."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(ROOT / "bench" / "fake_slack_app.py")],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            # it stands for Slack's servers, whose CPU is not the replica's: when both want a CPU,
            # the servers measured go first
            preexec_fn=lambda: os.nice(FAKE_SLACK_NICENESS),  # noqa: PLW1509 (no threads yet here)
        )
        assert self.proc.stdout is not None
        self.api_url = self.proc.stdout.readline().decode().strip()
        if not self.api_url:
            raise RuntimeError("the fake Slack did not start")
        self.base = self.api_url.removesuffix("/api/")
        self.http: aiohttp.ClientSession | None = None

    async def _get(self, path: str) -> Any:
        if self.http is None:
            self.http = aiohttp.ClientSession()
        async with self.http.get(self.base + path) as response:
            return await response.json()

    async def replied(self) -> dict[str, float]:
        """``{text: when}`` (``time.monotonic()``) of every reply seen since the last reset."""
        return dict(await self._get("/_bench/replied"))

    async def calls(self) -> dict[str, int]:
        """Web API calls by method since the last reset."""
        return dict(await self._get("/_bench/calls"))

    async def reset(self) -> None:
        if self.http is None:
            self.http = aiohttp.ClientSession()
        async with self.http.post(self.base + "/_bench/reset") as response:
            await response.read()

    async def stop(self) -> None:
        if self.http is not None:
            await self.http.close()
        self.proc.terminate()
        self.proc.wait(10)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def cpu_seconds(pid: int) -> float:
    """User + system CPU of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def serve_processes(pid: int) -> dict[str, int]:
    """``{"web": pid, "worker": child pid}`` of a serve started with one worker process
    (``"worker 1"``, ``"worker 2"``, … with several), else ``{"serve": pid}``."""
    children = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children += [int(c) for c in (task / "children").read_text().split()]
    if not children:
        return {"serve": pid}
    if len(children) == 1:
        return {"web": pid, "worker": children[0]}
    return {"web": pid, **{f"worker {i}": child for i, child in enumerate(sorted(children), 1)}}


async def wait_until_up(url: str, proc: subprocess.Popen[bytes], seconds: float = START_SECONDS) -> None:
    deadline = time.monotonic() + seconds
    async with aiohttp.ClientSession() as http:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"{url} exited at start (status {proc.returncode})")
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(url) as response:
                    if response.status in (200, 404, 405):
                        return
            await asyncio.sleep(0.2)
    raise RuntimeError(f"{url} did not come up")


def start_serve(
    args: argparse.Namespace, fake: FakeSlackProcess, prefix: str, folder: Path
) -> tuple[Any, str]:
    script = folder / "model.yaml"
    script.write_text(json.dumps([MODEL_TURN.model_dump(mode="json")]))
    port = free_port()
    own = ("SLACK_", "FEISHU_", "TELEGRAM_", "CLARIGATE_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    env.update(
        {
            "PYTHONPATH": str(ROOT),
            "REDIS_URL": args.redis_url,
            "CLARIGATE_BOT_ID": prefix,
            "LLM_MODEL": f"scripted:{script}",
            "CHECKPOINTER_URL": "memory://",
            "CLARIGATE_AGENT__ALLOW_CLARIFICATION": "false",  # one model call per message
            "CLARIGATE_DATA_DIR": str(folder / "data"),
            "CLARIGATE_SHUTDOWN_GRACE_SECONDS": "1",
            "SLACK_BOT_TOKEN": BOT_TOKEN,
            "SLACK_SIGNING_SECRET": SIGNING_SECRET,
            "SLACK_API_URL": fake.api_url,
        }
    )
    if args.workers:
        env["CLARIGATE_WORKERS"] = str(args.workers)
    if args.role:
        env["CLARIGATE_ROLE"] = args.role
    if args.worker_processes:
        env["CLARIGATE_WORKER_PROCESSES"] = args.worker_processes
    log = (folder / "serve.log").open("wb")
    cmd = [
        sys.executable,
        "-m",
        "clarigate.gateway.cli.main",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    if os.environ.get("BENCH_PROFILE"):  # where serve's CPU goes: python -m pstats FILE
        cmd[1:3] = ["-m", "cProfile", "-o", os.environ["BENCH_PROFILE"], "-m", "clarigate.gateway.cli.main"]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    return proc, f"http://127.0.0.1:{port}"


def own_redis(folder: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A redis-server of this benchmark's on a free loopback port (no persistence): other work on
    a shared Redis (a test suite deleting 100k keys at once) stalls every client's round trip,
    the ack's included, and not the bare bolt app's."""
    port = free_port()
    cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    cmd += ["--dir", str(folder)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return proc, f"redis://127.0.0.1:{port}/0"
        time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


@dataclass
class Servers:
    """The running set: the fake Slack, serve (its process and URL), the bolt app, the POST URLs
    of both (``targets``), serve's key prefix and data folder, and the run's id."""

    fake: FakeSlackProcess
    serve: subprocess.Popen[bytes]
    url: str
    bolt: subprocess.Popen[bytes]
    targets: dict[str, str]
    prefix: str
    folder: Path
    run: str

    def acking(self) -> dict[str, int]:
        """The process that acks for each target (serve's web process, bolt)."""
        return {"clarigate serve": self.serve.pid, "bare slack-bolt": self.bolt.pid}


def start_bolt(fake: FakeSlackProcess) -> tuple[subprocess.Popen[bytes], str]:
    """``bench/bolt_ack_app.py`` on a free port, checking its token at the fake Slack."""
    port = free_port()
    bolt = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "bolt_ack_app.py"), str(port), SIGNING_SECRET]
        + [BOT_TOKEN, fake.api_url],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    return bolt, f"http://127.0.0.1:{port}"


@contextlib.asynccontextmanager
async def serve_beside_bolt(args: argparse.Namespace) -> AsyncIterator[Servers]:
    """Everything started and answering (``args``: ``own_redis``, ``redis_url``, set here with a
    Redis of its own, and serve's ``workers``, ``role``, ``worker_processes``); stopped after, and
    its temporary folders removed (serve's log kept, and where it is said, when the run failed)."""
    redis_proc, redis_dir = None, None
    if args.own_redis:
        redis_dir = Path(tempfile.mkdtemp(prefix="clarigate-bench-redis-"))
        redis_proc, args.redis_url = own_redis(redis_dir)
        print(f"Redis: a redis-server of the benchmark's own at {args.redis_url}")
    run = uuid.uuid4().hex[:8]
    prefix = f"bench-{run}"
    fake = FakeSlackProcess()
    folder = Path(tempfile.mkdtemp(prefix="clarigate-bench-"))
    serve, url = start_serve(args, fake, prefix, folder)
    bolt, bolt_url = start_bolt(fake)
    failed = True
    try:
        await wait_until_up(f"{url}/readyz", serve)
        await wait_until_up(f"{bolt_url}/", bolt)
        targets = {"clarigate serve": f"{url}/slack/events", "bare slack-bolt": f"{bolt_url}/slack/events"}
        print(f"serve processes: {', '.join(f'{k} {v}' for k, v in serve_processes(serve.pid).items())}")
        yield Servers(fake, serve, url, bolt, targets, prefix, folder, run)
        failed = False
    finally:
        await stop(serve, bolt, fake)
        await delete_prefix(args.redis_url, prefix)
        if redis_proc is not None:
            redis_proc.terminate()
            redis_proc.wait(10)
        if failed:
            print(f"serve's log is kept: {folder / 'serve.log'}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
        if redis_dir is not None:
            shutil.rmtree(redis_dir, ignore_errors=True)


async def stop(serve: subprocess.Popen[bytes], bolt: subprocess.Popen[bytes], fake: FakeSlackProcess) -> None:
    for proc in (serve, bolt):
        proc.send_signal(signal.SIGTERM)
    for proc in (serve, bolt):
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
    await fake.stop()


async def delete_prefix(redis_url: str, prefix: str) -> None:
    from redis.asyncio import Redis

    client = Redis.from_url(redis_url)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}:*", count=1000)]
        if keys:
            await client.delete(*keys)
    finally:
        await client.aclose()
