"""The image's runtime contract, exercised without a container engine.

The process the image starts (``clarigate`` with the Dockerfile's CMD, configured the way the
image and the manifests configure it) is run here against the real Redis and PostgreSQL: the
image's health probe must see it healthy, ``/readyz`` ready, ``/metrics`` must expose what
the alert rules ask about, and SIGTERM must end it cleanly within the Kubernetes grace period.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from prometheus_client.metrics import MetricWrapperBase

from clarigate.gateway.runtime import metrics
from tests.deploy.k8s_objects import DEPLOY, K8S, load_docs, pod_spec
from tests.deploy.test_image import stages

psycopg = pytest.importorskip("psycopg", reason="psycopg is not installed")
POSTGRES = "postgresql://postgres@127.0.0.1:5432/test"
REDIS = "redis://127.0.0.1:6379/0"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def checkpoint_schema() -> Iterator[str]:
    """A schema of its own in the test database, so the checkpointer's tables meet no one else's."""
    schema = f"deploy_{uuid.uuid4().hex[:12]}"
    try:
        with psycopg.connect(POSTGRES, autocommit=True, connect_timeout=5) as conn:
            conn.execute(f'CREATE SCHEMA "{schema}"')
    except psycopg.OperationalError as exc:
        pytest.skip(f"PostgreSQL not reachable on 127.0.0.1:5432: {exc}")
    yield schema
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


@pytest.fixture
def bot_id() -> Iterator[str]:
    """A bot id (the Redis key prefix) used by this test only; its keys are deleted afterwards."""
    prefix = f"deploytest-{uuid.uuid4().hex[:12]}"
    yield prefix
    client = redis.Redis.from_url(REDIS)
    keys = list(client.scan_iter(f"{prefix}:*"))
    if keys:
        client.delete(*keys)
    client.close()


def image_command() -> list[str]:
    """ENTRYPOINT + CMD of the final stage, with the entrypoint resolved in this virtualenv."""
    final = dict(stages()[-1])
    entrypoint, command = json.loads(final["ENTRYPOINT"]), json.loads(final["CMD"])
    script = Path(sys.executable).with_name(entrypoint[0])
    return [str(script), *entrypoint[1:], *command]


def image_health_probe(port: int) -> int:
    """Exit status of the image's HEALTHCHECK command against ``port``."""
    probe = [sys.executable, str(DEPLOY / "healthcheck.py")]
    return subprocess.run(probe, env={"PORT": str(port)}, capture_output=True, timeout=30).returncode


def get(url: str) -> tuple[int, str]:
    """Status and body of a GET (error statuses included)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_served_as_the_image_runs_it(tmp_path: Path, bot_id: str, checkpoint_schema: str) -> None:
    port = free_port()
    command = image_command()
    # Listen on loopback only here; the image listens on every interface of its container.
    command[command.index("--host") + 1] = "127.0.0.1"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "PORT": str(port),
        "CLARIGATE_CONFIG": str(DEPLOY / "bot.example.yaml"),
        "CLARIGATE_DATA_DIR": str(tmp_path / "data"),
        "CLARIGATE_LOG_FORMAT": "json",
        "CLARIGATE_BOT_ID": bot_id,
        "REDIS_URL": REDIS,
        "CHECKPOINTER_URL": f"{POSTGRES}?options=-csearch_path%3D{checkpoint_schema}",
    }
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        healthy = False
        for _ in range(120):  # bounded: about a minute at most
            if server.poll() is not None:
                break
            if image_health_probe(port) == 0:
                healthy = True
                break
            time.sleep(0.5)
        output = server.stdout.read() if server.stdout and not healthy else ""
        assert healthy, f"the image's health probe never passed; output:\n{output}"

        for _ in range(120):  # the port opens first; the worker process is ready a little later
            status, body = get(f"http://127.0.0.1:{port}/readyz")
            if status == 200:
                break
            time.sleep(0.5)
        assert (status, json.loads(body)["status"]) == (200, "ready"), body
        # Ready means the checkpoint database was reached: the saver made its tables there.
        with psycopg.connect(POSTGRES) as conn:
            query = "SELECT table_name FROM information_schema.tables WHERE table_schema = %s"
            tables = {row[0] for row in conn.execute(query, (checkpoint_schema,))}
        assert "checkpoints" in tables

        status, exposition = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        defined = [m for m in vars(metrics).values() if isinstance(m, MetricWrapperBase)]
        assert defined
        for family in (family for metric in defined for family in metric.describe()):
            exposed_as = family.name + ("_total" if family.type == "counter" else "")
            assert f"# TYPE {exposed_as} {family.type}" in exposition

        # Kubernetes sends SIGTERM after the preStop pause and kills after the grace period.
        spec = pod_spec(load_docs(K8S / "bot" / "statefulset.yaml")[0])
        pre_stop = spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=spec["terminationGracePeriodSeconds"] - pre_stop) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        if server.stdout:
            server.stdout.close()
