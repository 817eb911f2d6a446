"""A stop signal while ``serve`` is still starting ends it cleanly: exit 0, "stopped cleanly".

deploy/README "The contract": exit 0 is "stopped cleanly (SIGTERM, SIGINT or SIGHUP)". A replica
told to stop while it waits for Redis or PostgreSQL (up to ``startup_wait_seconds``), or while its
agent and platforms start, used to die of the signal (status -15, not a line said why).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
import time
import uuid
from pathlib import Path

import pytest
from redis.asyncio import Redis

from .served import STUCK_PLATFORM, Served, free_port, operator_env

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
#: Longer than any test here: the waits end by the stop signal, never by their budget.
WAIT = "600"


def serving(tmp_path: Path, **extra: str) -> Served:
    env = operator_env(tmp_path, PORT=str(free_port()), CLARIGATE_STARTUP_WAIT_SECONDS=WAIT, **extra)
    return Served(["serve", "--host", "127.0.0.1"], env, tmp_path)


def stopped_cleanly(served: Served, sig: int) -> None:
    code = served.stop(sig)
    assert code == 0, f"exit status {code}\n{served.output}"
    assert served.count(f"received {signal.Signals(sig).name}: stopping") >= 1, served.output
    assert "stopped cleanly" in served.lines[-1], served.output


@pytest.mark.parametrize(
    "store",
    [
        {"REDIS_URL": "redis://127.0.0.1:{port}/0"},
        {"CHECKPOINTER_URL": "postgresql://postgres@127.0.0.1:{port}/test"},
    ],
    ids=["redis", "postgres"],
)
def test_a_stop_while_waiting_for_an_unreachable_store_ends_the_wait(
    tmp_path: Path, store: dict[str, str]
) -> None:
    closed = free_port()  # nothing listens there
    served = serving(tmp_path, **{name: url.format(port=closed) for name, url in store.items()})
    try:
        assert served.wait_for_line("is not reachable"), served.output
    finally:
        stopped_cleanly(served, signal.SIGTERM)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP], ids=lambda s: s.name)
def test_a_stop_while_the_platforms_start_ends_the_start(tmp_path: Path, sig: signal.Signals) -> None:
    """One process (the embedded store): the port is bound and announced, the agent loaded, a
    platform's receiver still starting."""
    served = serving(tmp_path, CLARIGATE_EXTRA_ADAPTERS=STUCK_PLATFORM)
    try:
        assert served.wait_for_line("agent ready"), served.output
    finally:
        stopped_cleanly(served, sig)
    assert served.count("gateway stopped") == 1, served.output  # what had started was stopped


def test_worker_processes_started_stop_too_when_the_web_process_is_stopped_while_starting(
    tmp_path: Path,
) -> None:
    """With Redis (role auto) the worker processes start while the web process does: stopped
    then, the web process passes the stop on and waits for them, each stopping cleanly itself."""
    bot_id = f"test-stop-start-{uuid.uuid4().hex[:10]}"
    served = serving(
        tmp_path,
        REDIS_URL=REDIS_URL,
        CLARIGATE_BOT_ID=bot_id,
        CLARIGATE_WORKER_PROCESSES="1",
        CLARIGATE_EXTRA_ADAPTERS=STUCK_PLATFORM,
    )
    try:
        # the worker process has started (it takes no messages in: nothing keeps it starting)
        assert served.wait_for_line("gateway started: "), served.output
        pid = int(re.findall(r"worker process started \(pid (\d+)\)", served.output)[0])
    finally:
        stopped_cleanly(served, signal.SIGTERM)
        asyncio.run(_forget(bot_id))
    assert served.count("stopped cleanly") == 2, served.output  # the web process's and the worker's
    assert "the web process is gone" not in served.output  # it was stopped, not left to die
    deadline = time.monotonic() + 10
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def _forget(bot_id: str) -> None:
    client = Redis.from_url(REDIS_URL)
    keys = [key async for key in client.scan_iter(match=f"{bot_id}:*", count=500)]
    if keys:
        await client.delete(*keys)
    await client.aclose()


#: ``clarigate serve``, stopped while it reads its configuration: the first thing it does once
#: its command line is parsed, before the store, the agent and the web server load.
_STOPPED_WHILE_CONFIGURED = """
import os, signal, sys
import clarigate.gateway.runtime.config as config

read = config.load_config

def load_config(path):
    os.kill(os.getpid(), signal.SIGTERM)  # an orchestrator's stop, this early
    return read(path)

config.load_config = load_config
from clarigate.gateway.cli.main import main

sys.exit(main(["serve", "--host", "127.0.0.1"]))
"""


def test_a_stop_before_the_configuration_is_read_ends_the_start_cleanly(tmp_path: Path) -> None:
    """A replica stopped in its first moments (a rolling update, a scale-down) exits 0 saying why:
    the handlers are there before anything loads, not once the store and the web server have
    (which took up to a second, and the process died of the signal, status -15)."""
    env = operator_env(tmp_path, PORT=str(free_port()), CLARIGATE_STARTUP_WAIT_SECONDS=WAIT)
    served = Served([], env, tmp_path, command=[sys.executable, "-c", _STOPPED_WHILE_CONFIGURED])
    code = served.wait(60)
    assert code == 0, f"exit status {code}\n{served.output}"
    assert served.count("received SIGTERM: stopping") == 1, served.output
    assert "stopped cleanly" in served.lines[-1], served.output
    assert served.count("gateway started") == 0, served.output  # it never started taking work
