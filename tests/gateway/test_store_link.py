"""The store's Redis link: many tasks on one connection, each gets its own reply; blips are ridden out.

Against the real Redis on 127.0.0.1:6379, through a proxy the tests can cut or stall, and
against Redis servers the tests start themselves (a password, a Unix socket).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from redis import exceptions as errors
from redis.asyncio import Redis

from gateway.store.link import RedisLink, Script

from .conftest import REDIS_URL


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def redis_server(args: list[str], ready: Callable[[], bool]) -> Iterator[None]:
    """A redis-server of the test's own, stopped afterwards; skips when it exits at start."""
    server = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 10
        while not ready() and time.monotonic() < deadline:
            if server.poll() is not None:
                pytest.skip(f"redis-server would not start with {' '.join(args[1:])}")
            time.sleep(0.05)
        yield
    finally:
        server.terminate()
        server.wait(10)


def listening(port: int) -> bool:
    """True when something accepts connections on 127.0.0.1:``port``."""
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


class CuttableProxy:
    """TCP proxy to the test Redis: ``cut()`` drops every open link, ``stall`` holds replies back."""

    def __init__(self) -> None:
        self.port = 0
        self.links = 0  # connections accepted so far
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._link, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def stall(self) -> bool:
        return not self._flowing.is_set()

    @stall.setter
    def stall(self, held: bool) -> None:
        if held:
            self._flowing.clear()
        else:
            self._flowing.set()

    def cut(self) -> None:
        for writer in list(self._writers):
            writer.transport.abort()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _link(self, client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        self.links += 1
        server_r, server_w = await asyncio.open_connection("127.0.0.1", 6379)
        self._writers.update((client_w, server_w))

        async def pump(src: asyncio.StreamReader, dst: asyncio.StreamWriter, replies: bool) -> None:
            while data := await src.read(65536):
                if replies:
                    await self._flowing.wait()
                dst.write(data)
                await dst.drain()

        tasks = {
            asyncio.create_task(pump(client_r, server_w, False)),
            asyncio.create_task(pump(server_r, client_w, True)),
        }
        self._tasks.update(tasks)
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        except Exception:
            pass
        finally:
            for task in tasks:
                task.cancel()
                self._tasks.discard(task)
            for writer in (client_w, server_w):
                self._writers.discard(writer)
                writer.transport.abort()


@pytest.fixture
async def proxy() -> AsyncIterator[CuttableProxy]:
    proxy = CuttableProxy()
    await proxy.start()
    yield proxy
    await proxy.close()


@pytest.fixture
async def raw() -> AsyncIterator[Redis]:
    client = Redis.from_url(REDIS_URL, decode_responses=True)
    yield client
    await client.aclose()


@pytest.fixture
async def key(raw: Redis) -> AsyncIterator[str]:
    """A key name no other test uses; it and the keys under it are deleted afterwards."""
    name = f"test-link-{uuid.uuid4().hex[:10]}"
    yield name
    keys = [k async for k in raw.scan_iter(match=f"{name}*")]
    if keys:
        await raw.delete(*keys)


async def test_concurrent_commands_on_one_connection_each_get_their_own_reply(key: str) -> None:
    link = RedisLink(REDIS_URL)
    try:

        async def writer(i: int) -> tuple[int, str | None, int]:
            await asyncio.sleep(random.random() / 1000)
            await link.execute("SET", f"{key}:{i}", f"value-{i}")
            value = await link.execute("GET", f"{key}:{i}")
            count = await link.execute("INCR", f"{key}:count")
            return i, value, count

        results = await asyncio.gather(*(writer(i) for i in range(300)))
    finally:
        await link.close()
    assert all(value == f"value-{i}" for i, value, _ in results)
    assert sorted(count for _, _, count in results) == list(range(1, 301))  # no reply given twice


async def test_a_cut_connection_is_remade_and_the_waiting_commands_are_sent_again(
    proxy: CuttableProxy, key: str, raw: Redis
) -> None:
    link = RedisLink(proxy.url)
    try:
        assert await link.execute("SET", key, "before") == "OK"
        proxy.stall = True
        waiting = [asyncio.create_task(link.execute("INCR", f"{key}:n")) for _ in range(5)]
        await asyncio.sleep(0.05)  # Redis ran them; the replies are held in the proxy
        proxy.cut()
        proxy.stall = False
        counts = await asyncio.gather(*waiting)
        assert await link.execute("GET", key) == "before"
    finally:
        await link.close()
    assert proxy.links == 2  # one reconnect for all of them
    # each INCR ran once before the cut and once more when re-sent: the link repeats what it
    # did not hear back about, which is why every command the store sends is safe to repeat
    assert sorted(counts) == [6, 7, 8, 9, 10]
    assert await raw.get(f"{key}:n") == "10"


async def test_a_reply_that_never_comes_closes_the_connection_and_the_command_is_retried(
    proxy: CuttableProxy, key: str
) -> None:
    link = RedisLink(proxy.url, reply_timeout=0.2)
    try:
        await link.execute("SET", key, "v")
        proxy.stall = True
        started = time.monotonic()
        pending = asyncio.create_task(link.execute("GET", key))
        await asyncio.sleep(0.4)
        proxy.stall = False  # the new connection answers at once
        assert await pending == "v"
        assert time.monotonic() - started < 3
    finally:
        await link.close()
    assert proxy.links >= 2


async def test_redis_that_does_not_answer_at_all_is_an_error_within_seconds() -> None:
    with socket.socket() as quiet:  # listens, never accepts: connecting hangs
        quiet.bind(("127.0.0.1", 0))
        quiet.listen(0)
        port = quiet.getsockname()[1]
        link = RedisLink(f"redis://127.0.0.1:{port}/0", connect_timeout=0.2, reply_timeout=0.2, retries=1)
        started = time.monotonic()
        # the backlog takes the first connection, whose PING never gets a reply; the retry's
        # connection is never accepted
        with pytest.raises((errors.ConnectionError, errors.TimeoutError)):
            await link.execute("PING")
        assert time.monotonic() - started < 3
        await link.close()


async def test_a_refused_connection_is_a_connection_error_naming_the_address() -> None:
    port = free_port()
    link = RedisLink(f"redis://127.0.0.1:{port}/0", retries=0)
    with pytest.raises(errors.ConnectionError, match=f"127.0.0.1:{port}") as caught:
        await link.execute("PING")
    assert isinstance(caught.value.__cause__, ConnectionRefusedError)


async def test_a_script_unknown_to_redis_is_loaded_and_run(key: str, raw: Redis) -> None:
    script = Script(f"return 'hello from {key}'")  # a script Redis has never seen
    link = RedisLink(REDIS_URL)
    try:
        assert await link.evalsha(script, [], []) == f"hello from {key}"
        assert (await raw.script_exists(script.sha)) == [True]
    finally:
        await link.close()


async def test_error_replies_are_redis_py_exceptions_and_the_link_goes_on(key: str) -> None:
    link = RedisLink(REDIS_URL)
    try:
        await link.execute("SET", key, "text")
        with pytest.raises(errors.ResponseError, match="not an integer"):
            await link.execute("INCR", key)
        assert await link.execute("GET", key) == "text"
        assert await link.execute("GET", f"{key}:missing") is None
        assert await link.execute("EXISTS", key) == 1
    finally:
        await link.close()


async def test_the_database_in_the_url_is_selected(key: str) -> None:
    link = RedisLink(REDIS_URL.rsplit("/", 1)[0] + "/9")
    other = Redis.from_url(REDIS_URL.rsplit("/", 1)[0] + "/9", decode_responses=True)
    try:
        await link.execute("SET", key, "in 9")
        assert await other.get(key) == "in 9"
    finally:
        await other.delete(key)
        await other.aclose()
        await link.close()


async def test_a_cancelled_blocking_read_closes_its_connection_and_loses_no_entry(
    key: str, raw: Redis
) -> None:
    await raw.xgroup_create(key, "g", id="0", mkstream=True)
    reads = RedisLink(REDIS_URL, close_on_cancel=True)
    try:
        blocked = asyncio.create_task(
            reads.execute(
                "XREADGROUP", "GROUP", "g", "gone", "BLOCK", 5000, "STREAMS", key, ">", reply_within=10
            )
        )
        await asyncio.sleep(0.1)
        blocked.cancel()
        with pytest.raises(asyncio.CancelledError):
            await blocked
        await asyncio.sleep(0.05)  # Redis notices the closed connection
        await raw.xadd(key, {"n": "1"})
        read = await raw.xreadgroup("g", "alive", {key: ">"}, count=1)
    finally:
        await reads.close()
    assert [fields for _, entries in read for _, fields in entries] == [{"n": "1"}]


async def test_a_closed_link_refuses_commands() -> None:
    link = RedisLink(REDIS_URL)
    await link.execute("PING")
    await link.close()
    with pytest.raises(errors.ConnectionError, match="closed"):
        await link.execute("PING")


def test_a_link_can_be_used_from_one_event_loop_after_another() -> None:
    link = RedisLink(REDIS_URL)
    assert asyncio.run(link.execute("PING")) == "PONG"
    assert asyncio.run(link.execute("PING")) == "PONG"  # the first loop and its socket are gone
    asyncio.run(link.close())


# --- servers of the test's own: a password, a Unix socket --------------------------------------


@pytest.fixture(scope="module")
def own_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """A Redis on a free port and a Unix socket, requiring the password ``s3cret``."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed: cannot start a Redis with a password")
    folder, port = tmp_path_factory.mktemp("redis"), free_port()
    sock = folder / "redis.sock"
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--requirepass", "s3cret", "--unixsocket", str(sock), "--dir", str(folder)]
    with redis_server(args, sock.exists):
        yield port, sock


async def test_a_password_in_the_url_authenticates(own_redis: tuple[int, Path]) -> None:
    port, _ = own_redis
    link = RedisLink(f"redis://:s3cret@127.0.0.1:{port}/2", client_name="clarigate:test")
    try:
        assert await link.execute("SET", "k", "v") == "OK"
        assert await link.execute("CLIENT", "GETNAME") == "clarigate:test"
    finally:
        await link.close()


async def test_a_wrong_password_is_an_authentication_error_at_once(own_redis: tuple[int, Path]) -> None:
    port, _ = own_redis
    link = RedisLink(f"redis://:wrong@127.0.0.1:{port}/0", retries=3)
    started = time.monotonic()
    with pytest.raises(errors.AuthenticationError):
        await link.execute("PING")
    assert time.monotonic() - started < 0.5  # not retried: it would only delay the error
    await link.close()


async def test_a_missing_password_is_an_authentication_error(own_redis: tuple[int, Path]) -> None:
    port, _ = own_redis
    link = RedisLink(f"redis://127.0.0.1:{port}/0")
    with pytest.raises(errors.AuthenticationError):
        await link.execute("PING")
    await link.close()


async def test_a_unix_socket_url_connects_there(own_redis: tuple[int, Path]) -> None:
    _, sock = own_redis
    link = RedisLink(f"unix://{sock}?db=3&password=s3cret")
    try:
        await link.execute("SET", "where", "socket")
        assert await link.execute("GET", "where") == "socket"
        assert "db=3" in await link.execute("CLIENT", "INFO")
    finally:
        await link.close()


@pytest.fixture(scope="module")
def tls_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """A Redis speaking only TLS, with a self-signed certificate for 127.0.0.1 (its CA file)."""
    binary, openssl = shutil.which("redis-server"), shutil.which("openssl")
    if binary is None or openssl is None:
        pytest.skip("redis-server and openssl are needed to start a Redis that speaks TLS")
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
    link = RedisLink(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={cert}")
    try:
        assert await link.execute("SET", "over", "tls") == "OK"
        assert await link.execute("GET", "over") == "tls"
    finally:
        await link.close()
    unknown_ca = RedisLink(f"rediss://127.0.0.1:{port}/0", retries=0)  # the system's CAs only
    with pytest.raises(errors.ConnectionError, match="certificate verify failed"):
        await unknown_ca.execute("PING")
    unchecked = RedisLink(f"rediss://127.0.0.1:{port}/0?ssl_cert_reqs=none")
    try:
        assert await unchecked.execute("PING") == "PONG"  # the operator chose not to verify
    finally:
        await unchecked.close()
