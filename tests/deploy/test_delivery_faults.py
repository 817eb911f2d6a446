"""Faults with two ``clarigate serve`` replicas on a real Redis: every acknowledged message is
answered once, the agent runs once per message.

- the platform API fails (503) for longer than jobs used to be given up: every reply arrives
  once it recovers, and the agent ran once per message;
- a replica is killed with SIGKILL while a reply is in flight: the other replica resumes the
  delivery (the platform shows that reply once, by its delivery id) and sends nothing twice;
- Redis is down for longer than the stale-claim time while a reply is in flight: the replica
  that reconnects first does not take the job from its owner, so nothing is sent twice.

The platform is ``fault_platform.FakePlatform`` in this process; each replica reaches it through
``HttpPlatformAdapter``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from redis.asyncio import Redis

from clarigate.agent.protocol import catalog

from .fault_platform import FakePlatform
from .test_sigterm import free_port, serve_command

REPO = Path(__file__).resolve().parents[2]
REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
STALE = 1.0  # the replicas' stale-claim time (seconds)


async def eventually(check: Callable[[], Any], within: float, what: str) -> Any:
    """Poll ``check()`` until it is truthy (what a user would eventually see), or fail."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


class Replicas:
    """Starts ``clarigate serve`` processes of one bot on one Redis, with the fake platform."""

    def __init__(self, tmp: Path, platform: FakePlatform, redis_url: str) -> None:
        self.prefix = f"test-faults-{uuid.uuid4().hex[:10]}"
        self.platform = platform
        self.redis_url = redis_url
        self.procs: list[subprocess.Popen[bytes]] = []
        self.urls: dict[int, str] = {}
        script = tmp / "script.json"
        script.write_text(json.dumps([{"content": "answer to: {last_user}"}]))
        self.env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("SLACK_", "FEISHU_", "TELEGRAM_"))},
            "PYTHONPATH": str(REPO),
            "REDIS_URL": redis_url,
            "CLARIGATE_BOT_ID": self.prefix,
            "LLM_MODEL": f"scripted:{script}",
            "CHECKPOINTER_URL": "memory://",
            "CLARIGATE_DATA_DIR": str(tmp / "data"),
            "CLARIGATE_EXTRA_ADAPTERS": json.dumps(["tests.deploy.fault_platform:HttpPlatformAdapter"]),
            "PLATFORM_URL": platform.url,
            "CLARIGATE_STALE_CLAIM_SECONDS": str(STALE),
            "CLARIGATE_WORKERS": "8",
            "CLARIGATE_SHUTDOWN_GRACE_SECONDS": "1",
        }

    async def launch(self) -> subprocess.Popen[bytes]:
        """One more replica, ready (``/readyz``: its worker processes have started too)."""
        port = free_port()
        cmd = serve_command(port)
        log = open(Path(self.env["CLARIGATE_DATA_DIR"]).parent / f"replica-{port}.log", "wb")  # noqa: SIM115, ASYNC230
        proc = subprocess.Popen(cmd, cwd=REPO, env=self.env, stdout=log, stderr=subprocess.STDOUT)  # noqa: ASYNC220
        self.procs.append(proc)
        url = self.urls[proc.pid] = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(timeout=1) as http:

            async def healthy() -> bool:
                assert proc.poll() is None, "the replica exited"
                try:
                    return (await http.get(f"{url}/readyz", timeout=5)).status_code == 200
                except httpx.HTTPError:
                    return False

            deadline = time.monotonic() + 60
            while not await healthy():
                assert time.monotonic() < deadline, "clarigate serve did not start"
                await asyncio.sleep(0.1)
        return proc

    async def say(self, proc: subprocess.Popen[bytes], chat: str, text: str, event_id: str) -> str:
        """Write to the bot through ``proc``'s webhook; the outcome."""
        async with httpx.AsyncClient(timeout=10) as http:
            body = {"chat": chat, "text": text, "event_id": event_id}
            return str((await http.post(f"{self.urls[proc.pid]}/test/say", json=body)).json()["outcome"])

    def runs_started(self, proc: subprocess.Popen[bytes]) -> float:
        """The replica's ``clarigate_runs_total{state="started"}``."""
        text = httpx.get(f"{self.urls[proc.pid]}/metrics", timeout=5).text
        pattern = r'^clarigate_runs_total\{[^}]*state="started"[^}]*\} (\S+)$'
        found = re.search(pattern, text, re.MULTILINE)
        assert found, "the replica exports clarigate_runs_total"
        return float(found.group(1))

    async def close(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        client = Redis.from_url(self.redis_url)
        try:
            keys = [key async for key in client.scan_iter(match=f"{self.prefix}:*", count=500)]
            if keys:
                await client.delete(*keys)
        except Exception:  # noqa: BLE001 (a test's own Redis may be gone already)
            pass
        finally:
            await client.aclose()


@pytest.fixture
async def platform() -> AsyncIterator[FakePlatform]:
    fake = FakePlatform()
    await fake.start()
    yield fake
    await fake.stop()


@pytest.fixture
async def replicas(tmp_path: Path, platform: FakePlatform) -> AsyncIterator[Replicas]:
    group = Replicas(tmp_path, platform, REDIS_URL)
    yield group
    await group.close()


def expected(events: int) -> dict[str, list[str]]:
    return {f"c{i}": [f"answer to: message {i}"] for i in range(events)}


async def test_a_platform_failing_longer_than_the_old_give_up_loses_nothing(replicas, platform):
    one, two = await replicas.launch(), await replicas.launch()
    platform.fail_for(10 * STALE)  # jobs used to be given up after 3 deliveries one stale time apart
    for i in range(40):
        outcome = await replicas.say((one, two)[i % 2], f"c{i}", f"message {i}", f"e{i}")
        assert outcome == "accepted"

    await eventually(lambda: len(platform.shown) >= 40, 120, "every reply to arrive")
    await asyncio.sleep(2 * STALE)  # nothing more comes

    assert platform.texts_by_chat() == expected(40)
    assert len(platform.arrivals) == 40  # none was sent twice
    assert replicas.runs_started(one) + replicas.runs_started(two) == 40  # the agent ran once each


async def test_a_replica_killed_mid_delivery_leaves_no_reply_lost_or_doubled(replicas, platform):
    one, two = await replicas.launch(), await replicas.launch()
    platform.latency = (0.1, 0.15)
    for i in range(10):
        await replicas.say((one, two)[i % 2], f"c{i}", f"message {i}", f"e{i}")
    await eventually(lambda: len(platform.shown) >= 10, 60, "the first replies")
    platform.hold_pid = one.pid  # the next reply of replica one reaches the platform, unanswered
    for i in range(10, 30):
        await replicas.say((one, two)[i % 2], f"c{i}", f"message {i}", f"e{i}")
    await asyncio.wait_for(platform.held.wait(), 30)

    one.send_signal(signal.SIGKILL)  # mid-delivery: the platform has the reply, the replica no answer
    one.wait()
    await eventually(lambda: len(platform.shown) >= 30, 60, "every reply")
    await asyncio.sleep(2 * STALE)

    assert platform.texts_by_chat() == expected(30)  # none lost, none shown twice
    # sent again: only replies the killed replica had in flight (it never heard they arrived),
    # with their delivery ids, so a platform with idempotency keys shows them once
    first_sender: dict[str, int] = {}
    resent = []
    for arrival in platform.arrivals:
        if arrival["delivery_id"] in first_sender:
            resent.append(arrival["delivery_id"])
        first_sender.setdefault(arrival["delivery_id"], arrival["pid"])
    assert 1 <= len(resent) <= 8  # the held reply, and at most one per job running there
    assert all(first_sender[delivery_id] == one.pid for delivery_id in resent)


@pytest.fixture
async def own_redis(tmp_path: Path) -> AsyncIterator[Callable[[str], Any]]:
    """A redis-server of this test (AOF on) that can be killed and restarted on the same port."""
    port = free_port()
    data = tmp_path / "redis"
    data.mkdir()
    cmd = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(data), "--save", ""]
    cmd += ["--appendonly", "yes", "--appendfsync", "always"]
    server: list[subprocess.Popen[bytes]] = []

    async def control(action: str) -> Any:
        if action == "start":
            started = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # noqa: ASYNC220
            server.append(started)
            for _ in range(100):
                try:
                    client = Redis(port=port)
                    await client.ping()
                    await client.aclose()
                    return f"redis://127.0.0.1:{port}/0"
                except Exception:  # noqa: BLE001 (not up yet)
                    await asyncio.sleep(0.05)
            raise AssertionError("redis-server did not start")
        if action == "kill":
            server[-1].send_signal(signal.SIGKILL)
            server[-1].wait()
        return None

    yield control
    for proc in server:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


async def test_redis_down_longer_than_the_stale_time_sends_nothing_twice(tmp_path, platform, own_redis):
    url = await own_redis("start")
    group = Replicas(tmp_path, platform, url)
    try:
        one = await group.launch()
        await group.launch()  # the replica that must not take one's job
        platform.hold_pid = one.pid
        for i in range(6):
            await group.say(one, f"c{i}", f"message {i}", f"e{i}")  # one's reader takes most of them
        await asyncio.wait_for(platform.held.wait(), 30)  # one of one's replies is in flight

        await own_redis("kill")
        await asyncio.sleep(4 * STALE)  # down for longer than the stale-claim time
        await own_redis("start")
        await asyncio.sleep(2 * STALE)  # both replicas are back; the owner renews its claims
        platform.release.set()  # the held send is answered now

        answered = lambda: sum(t.startswith("answer to:") for t in platform.shown_texts())  # noqa: E731
        await eventually(lambda: answered() >= 6, 60, "every reply")
        await asyncio.sleep(3 * STALE)

        # a run that was recording its reply when Redis went away says, once, that the message is
        # kept (README: a store outage is waited out); the answer follows, once
        kept = catalog.text("store_unavailable", "en")
        shown = platform.texts_by_chat()
        assert {chat: [t for t in texts if t != kept] for chat, texts in shown.items()} == expected(6)
        assert all(texts.count(kept) <= 1 and texts[-1] != kept for texts in shown.values())
        assert len(platform.arrivals) == len({a["delivery_id"] for a in platform.arrivals})  # no resend
    finally:
        await group.close()
