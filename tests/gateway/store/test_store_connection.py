"""How the store reaches Redis: passwords, Unix sockets, TLS, a least-privilege ACL user, Sentinel.

Against Redis servers the tests start themselves on free ports (skipped, saying why, without a
redis-server binary), and an ACL user made on the test Redis for one test and deleted after.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from redis.asyncio import Redis

from clarigate.gateway.cli.doctor import redis_problem
from clarigate.gateway.store.redis import RedisStore

from ..conftest import REDIS_URL, delete_prefix
from ..redis_proxy import ReplyDroppingProxy
from .test_store_contract import pending_record
from .test_store_replay import SCENARIOS, Replay

ROOT = Path(__file__).resolve().parents[3]


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def redis_binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed: cannot start a Redis of the test's own")
    return binary


@contextlib.contextmanager
def redis_server(args: list[str], ready: Callable[[], bool]) -> Iterator[subprocess.Popen[bytes]]:
    """A redis-server of the test's own, stopped afterwards; skips when it exits at start."""
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not ready() and time.monotonic() < deadline:
            if server.poll() is not None:
                pytest.skip(f"redis-server would not start with {' '.join(args[1:])}")
            time.sleep(0.05)
        yield server
    finally:
        server.terminate()
        server.wait(10)


def plain(port: int, folder: Path, *extra: str) -> list[str]:
    """Arguments of a throwaway redis-server on ``port`` (no persistence)."""
    args = [redis_binary(), "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    return [*args, "--dir", str(folder), *extra]


async def store_works(store: RedisStore) -> None:
    """One message through the store: accepted, read, completed."""
    assert await store.accept_job("e1", "message", "e1", "k", {"text": "hi"}, 60)
    (job,) = await store.read_jobs("w1", 10, 0)
    await store.complete_job(job)
    assert await store.is_done("e1")


# --- passwords and sockets ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """A Redis on a free port and a Unix socket, requiring the password ``s3cret``."""
    folder, port = tmp_path_factory.mktemp("redis"), free_port()
    sock = folder / "redis.sock"
    args = plain(port, folder, "--requirepass", "s3cret", "--unixsocket", str(sock))
    with redis_server(args, sock.exists):
        yield port, sock


async def test_a_password_and_database_in_the_url_are_used(own_redis: tuple[int, Path]) -> None:
    port, _ = own_redis
    store = RedisStore(f"redis://:s3cret@127.0.0.1:{port}/2", "pw")
    try:
        await store_works(store)
    finally:
        await store.close()
    raw = Redis.from_url(f"redis://:s3cret@127.0.0.1:{port}/2", decode_responses=True)
    assert await raw.exists("pw:done:e1") == 1  # in database 2
    await raw.aclose()


async def test_a_wrong_password_is_not_ready_and_doctor_says_why(own_redis: tuple[int, Path]) -> None:
    port, _ = own_redis
    store = RedisStore(f"redis://:wrong@127.0.0.1:{port}/0", "pw")
    try:
        assert not await store.ping()
    finally:
        await store.close()
    reason = await redis_problem(f"redis://:wrong@127.0.0.1:{port}/0")
    assert "invalid username-password" in reason.lower() and "wrong" not in reason


async def test_a_unix_socket_url_connects_there(own_redis: tuple[int, Path]) -> None:
    _, sock = own_redis
    store = RedisStore(f"unix://{sock}?db=3&password=s3cret", "sock")
    try:
        await store_works(store)
        assert "db=3" in await store._command("CLIENT", "INFO")
    finally:
        await store.close()


async def test_keepalive_and_health_checks_are_on(redis_url: str) -> None:
    store = RedisStore(redis_url, "unused")
    try:
        for client in (store._redis, store._reads, store._webhook):
            options = client.connection_pool.connection_kwargs
            assert options["socket_keepalive"] is True
            assert options["health_check_interval"] > 0
    finally:
        await store.close()


async def test_a_burst_of_calls_beyond_redis_pys_default_pool_succeeds(redis_stores) -> None:
    store = redis_stores()
    # more calls at once than redis-py's default pool of 100 allows: none fails
    results = await asyncio.gather(*(store.first_time(f"burst-{i}", 60) for i in range(300)))
    assert results == [True] * 300


async def test_doctor_names_a_refused_connection() -> None:
    port = free_port()
    problem = await redis_problem(f"redis://127.0.0.1:{port}/0")
    assert problem is not None and f"127.0.0.1:{port} refused the connection" in problem


# --- TLS ------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """A Redis speaking only TLS, with a self-signed certificate for 127.0.0.1 (its CA file)."""
    binary, openssl = redis_binary(), shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a certificate for a Redis that speaks TLS")
    folder = tmp_path_factory.mktemp("redis-tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1"]
        + ["-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    port = free_port()
    args = [binary, "--port", "0", "--tls-port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--tls-cert-file", str(cert), "--tls-key-file", str(key), "--tls-auth-clients", "no"]
    args += ["--appendonly", "no", "--dir", str(folder)]
    with redis_server(args, lambda: listening(port)):  # a build without TLS exits: skipped
        yield port, cert


async def test_a_rediss_url_speaks_tls_and_checks_the_certificate(tls_redis: tuple[int, Path]) -> None:
    port, cert = tls_redis
    store = RedisStore(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}", "tls")
    try:
        await store_works(store)
    finally:
        await store.close()
    assert "certificate verify failed" in await redis_problem(f"rediss://127.0.0.1:{port}/0")
    unchecked = RedisStore(f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=none", "tls2")
    try:
        assert await unchecked.ping()  # the operator chose not to verify
    finally:
        await unchecked.close()


# --- a least-privilege ACL user -------------------------------------------------------------------


def documented_acl(user: str, prefix: str, password: str) -> list[str]:
    """The ``ACL SETUSER`` line of deploy/README.md, for ``user`` on ``prefix``."""
    text = (ROOT / "deploy" / "README.md").read_text()
    match = re.search(r"^ACL SETUSER mybot (.+)$", text, re.MULTILINE)
    assert match, "deploy/README.md documents the ACL user"
    rules = match.group(1).replace("mybot:", f"{prefix}:").replace(">PASSWORD", f">{password}")
    return ["ACL", "SETUSER", user, *rules.split()]


@pytest.fixture
async def acl_replay() -> AsyncIterator[Replay]:
    """A store that logs in as a fresh ACL user with the documented rules, through the proxy."""
    raw = Redis.from_url(REDIS_URL, decode_responses=True)
    user, prefix, password = f"clarigate-test-{uuid.uuid4().hex[:10]}", f"acl-{uuid.uuid4().hex[:10]}", "pw"
    await raw.execute_command(*documented_acl(user, prefix, password))
    proxy = ReplyDroppingProxy()
    await proxy.start()
    store = RedisStore(f"redis://{user}:{password}@127.0.0.1:{proxy.port}/0", prefix)
    try:
        await store.ping()
        yield Replay(store, raw, proxy)
    finally:
        await store.close()
        await proxy.close()
        await raw.execute_command("ACL", "DELUSER", user)
        await delete_prefix(REDIS_URL, prefix)
        await raw.aclose()


async def test_the_acl_user_cannot_reach_other_keys_or_commands(acl_replay: Replay) -> None:
    from redis.exceptions import NoPermissionError

    with pytest.raises(NoPermissionError):
        await acl_replay.store._command("GET", "someone-else:thread:k")
    with pytest.raises(NoPermissionError):
        await acl_replay.store._command("FLUSHDB")


async def test_serves_own_reads_work_as_the_documented_acl_user(acl_replay: Replay) -> None:
    from clarigate.gateway.cli.admin_store import Admin
    from clarigate.gateway.runtime.config import GatewayConfig
    from clarigate.gateway.runtime.identity import claim_identities

    store = acl_replay.store
    url = f"redis://{store._redis.connection_pool.connection_kwargs['username']}:pw@127.0.0.1:6379/0"
    await claim_identities(url, store.prefix, {"slack": "T1/U0BOT"})  # the identity check at start
    await claim_identities(url, store.prefix, {"slack": "T1/U0BOT"})
    await store.save_pending(pending_record())
    await store.accept_job("e1", "message", "e1", "k", {}, 60)
    async with Admin(GatewayConfig(redis_url=url, bot_id=store.prefix)) as sampled:  # what ops samples
        assert (await sampled.backlog())["waiting"] >= 0
        assert [row["request_id"] for row in await sampled.pending()] == ["req-1"]
        assert await sampled.open_by_age([3600.0, float("inf")]) == [1, 0]  # the metrics' sample
        assert await sampled.prune_consumers() == []


@pytest.mark.parametrize("method", sorted(SCENARIOS))
async def test_every_store_method_works_as_the_documented_acl_user(method: str, acl_replay: Replay) -> None:
    await SCENARIOS[method](acl_replay)  # each with a lost reply too
    assert acl_replay.proxy.dropped == 1


# --- Sentinel -------------------------------------------------------------------------------------


@pytest.fixture
def sentinel_setup(tmp_path: Path) -> Iterator[tuple[int, int, int]]:
    """A master, its replica and one Sentinel watching them (quorum 1), all on free ports."""
    master, replica, sentinel = free_port(), free_port(), free_port()
    conf = tmp_path / "sentinel.conf"
    conf.write_text(
        f"port {sentinel}\nbind 127.0.0.1\ndir {tmp_path}\n"
        f"sentinel monitor clarigate 127.0.0.1 {master} 1\n"
        "sentinel down-after-milliseconds clarigate 1000\n"
        "sentinel failover-timeout clarigate 5000\n"
    )
    (tmp_path / "m").mkdir()
    (tmp_path / "r").mkdir()
    with (
        redis_server(plain(master, tmp_path / "m"), lambda: listening(master)),
        redis_server(
            plain(replica, tmp_path / "r", "--replicaof", "127.0.0.1", str(master)),
            lambda: listening(replica),
        ),
        redis_server([redis_binary(), str(conf), "--sentinel"], lambda: listening(sentinel)),
    ):
        yield master, replica, sentinel


async def wait_for(check: Callable[[], object], what: str, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if await check():  # type: ignore[misc]
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


async def test_the_store_follows_a_sentinel_failover(sentinel_setup: tuple[int, int, int]) -> None:
    master, replica, sentinel = sentinel_setup
    watcher = Redis(host="127.0.0.1", port=sentinel, decode_responses=True)

    async def replica_known() -> bool:
        replicas = await watcher.execute_command("SENTINEL", "REPLICAS", "clarigate")
        return any("s_down" not in str(r) and str(replica) in str(r) for r in replicas)

    async def master_port() -> int:
        _, port = await watcher.execute_command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", "clarigate")
        return int(port)

    store = RedisStore(f"redis+sentinel://127.0.0.1:{sentinel}/clarigate", "sent")
    try:
        assert await store.accept_job("e1", "message", "e1", "k", {"text": "before"}, 60)
        (first,) = await store.read_jobs("w1", 10, 0)
        await wait_for(replica_known, "the Sentinel to see the replica")
        replicated = Redis(host="127.0.0.1", port=replica, decode_responses=True)
        await wait_for(lambda: replicated.exists("sent:seen:e1"), "the replica to catch up")
        await replicated.aclose()

        await watcher.execute_command("SENTINEL", "FAILOVER", "clarigate")
        await wait_for(lambda: _equals(master_port(), replica), "the replica to be promoted")
        demoted = Redis(host="127.0.0.1", port=master, decode_responses=True)

        async def old_master_demoted() -> bool:
            return (await demoted.info("replication"))["role"] == "slave"

        # until the Sentinel turns the old master into a replica it still takes writes: Sentinel's
        # own window (min-replicas-to-write narrows it), the same for every client
        await wait_for(old_master_demoted, "the old master to become a replica")
        await demoted.aclose()

        # the same store, untouched: its next calls reach the new master
        await store.complete_job(first)
        assert await store.accept_job("e2", "message", "e2", "k", {"text": "after"}, 60)
        assert [j.inbound_id for j in await store.read_jobs("w1", 10, 0)] == ["e2"]
        promoted = Redis(host="127.0.0.1", port=replica, decode_responses=True)
        assert await promoted.exists("sent:done:e1", "sent:seen:e2") == 2  # written on the new master
        await promoted.aclose()
    finally:
        await store.close()
        await watcher.aclose()


async def _equals(value: object, expected: object) -> bool:
    return await value == expected  # type: ignore[misc]


def test_admin_and_the_identity_check_reach_the_master_through_sentinel(
    sentinel_setup: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``clarigate admin`` and serve's identity check connect as the store does: a
    ``redis+sentinel://`` URL (redis-py's own ``from_url`` refuses the scheme)."""
    import json
    import logging
    import os

    from clarigate.gateway.cli.main import main
    from clarigate.gateway.runtime.config import ENV_NAMES
    from clarigate.gateway.runtime.identity import claim_identities

    master, replica, sentinel = sentinel_setup
    url = f"redis+sentinel://127.0.0.1:{sentinel}/clarigate"

    async def prepare() -> None:
        store = RedisStore(url, "sentadmin")
        try:
            assert await store.accept_job("e1", "message", "e1", "k", {"text": "queued"}, 60)
        finally:
            await store.close()
        await claim_identities(url, "sentadmin", {"slack": "team T1 bot user U0BOT"})

    asyncio.run(prepare())
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("REDIS_URL", url)
    monkeypatch.setenv("CLARIGATE_BOT_ID", "sentadmin")
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    try:
        assert main(["admin", "backlog", "--json"]) == 0
        backlog = json.loads(capsys.readouterr().out)
        assert main(["admin", "identity", "--json"]) == 0
        identities = json.loads(capsys.readouterr().out)
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
    assert backlog["waiting"] == 1
    assert [(row["platform"], row["who"]) for row in identities] == [("slack", "team T1 bot user U0BOT")]
