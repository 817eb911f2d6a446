"""A file fetched by URL connects to an address the check passed, and to nothing else: a name
server that answers a public address to the check and 127.0.0.1 to the connection (DNS
rebinding) does not get the gateway into its own network; the site is still the URL's host
(``Host``, TLS SNI, the certificate checked).

The resolver is the one thing not real here: ``files.example`` answers from a script, and the
"internet" routes the public addresses it gives to a server on 127.0.0.1 (every other connection is
a real one)."""

from __future__ import annotations

import ipaddress
import shutil
import socket
import ssl
import subprocess
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpcore
import pytest
from aiohttp import web

from clarigate.gateway.flow.url_fetch import FetchRefused, check_address, fetch_capped

HOST = "files.example"
PUBLIC = "93.184.216.34"  # a public address: the check lets it through; the fake internet routes it
PUBLIC_TOO = "93.184.216.35"


@dataclass
class Network:
    """What ``HOST`` resolves to, lookup after lookup (the last answer repeats), where a public
    address and port lead (a local port), and what was looked up and connected to."""

    answers: list[str | tuple[str, ...]] = field(default_factory=lambda: [PUBLIC])
    routes: dict[tuple[str, int], int] = field(default_factory=dict)
    lookups: int = 0
    connects: list[tuple[str, int]] = field(default_factory=list)

    def answer(self) -> tuple[str, ...]:
        self.lookups += 1
        found = self.answers[min(self.lookups, len(self.answers)) - 1]
        return (found,) if isinstance(found, str) else found


@pytest.fixture
def network(monkeypatch: pytest.MonkeyPatch) -> Network:
    net = Network()
    real_getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in (HOST, HOST.encode()):  # asyncio's resolver and anyio's both come here
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, int(port))) for a in net.answer()]
        return real_getaddrinfo(host, port, *args, **kwargs)

    real_connect = httpcore.AnyIOBackend.connect_tcp

    async def connect_tcp(self: Any, host: str, port: int, *args: Any, **kwargs: Any) -> Any:
        try:
            ipaddress.ip_address(host)
        except ValueError:  # a name: resolved as anyio would, through the resolver above
            host = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][4][0]
        net.connects.append((host, port))
        if ipaddress.ip_address(host).is_global:
            if (host, port) not in net.routes:
                raise httpcore.ConnectError(f"nothing answers at {host}:{port}")
            host, port = "127.0.0.1", net.routes[host, port]
        return await real_connect(self, host, port, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(httpcore.AnyIOBackend, "connect_tcp", connect_tcp)
    return net


@dataclass
class Server:
    port: int
    hosts: list[str]  # the Host header of each request, in order
    names: list[str | None]  # the TLS server name (SNI) of each handshake


Serve = Callable[..., Any]


@pytest.fixture
async def serve() -> AsyncIterator[Serve]:
    """Starts an HTTP(S) server on 127.0.0.1: ``/report.csv`` answers ``body``, ``/moved``
    redirects to ``location``."""
    runners: list[web.AppRunner] = []

    async def start(body: bytes, location: str = "/report.csv", tls: ssl.SSLContext | None = None) -> Server:
        server = Server(0, [], [])

        async def report(request: web.Request) -> web.Response:
            server.hosts.append(request.headers.get("Host", ""))
            return web.Response(body=body, content_type="text/csv")

        async def moved(request: web.Request) -> web.Response:
            server.hosts.append(request.headers.get("Host", ""))
            raise web.HTTPFound(location)

        if tls is not None:
            tls.sni_callback = lambda sock, name, ctx: server.names.append(name)  # type: ignore[assignment]
        app = web.Application()
        app.router.add_get("/report.csv", report)
        app.router.add_get("/moved", moved)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        runners.append(runner)
        site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        server.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return server

    yield start
    for runner in runners:
        await runner.cleanup()


async def fetch(url: str) -> tuple[bytes, str]:
    return await fetch_capped(url, 1024, allow_private=False, seconds=5)


async def test_a_name_that_rebinds_to_loopback_after_the_check_never_reaches_the_local_server(
    network: Network, serve: Serve
):
    internal = await serve(b"secret\n")
    outside = await serve(b"public\n")
    network.answers = [PUBLIC, "127.0.0.1"]  # the check hears a public address, a later lookup not
    network.routes = {(PUBLIC, internal.port): outside.port}

    assert await fetch(f"http://{HOST}:{internal.port}/report.csv") == (b"public\n", "text/csv")
    assert internal.hosts == []
    assert network.lookups == 1 and network.connects == [(PUBLIC, internal.port)]
    assert outside.hosts == [f"{HOST}:{internal.port}"]  # the site is still the URL's host


async def test_a_name_that_rebinds_with_nothing_at_the_checked_address_is_refused(
    network: Network, serve: Serve
):
    internal = await serve(b"secret\n")
    network.answers = [PUBLIC, "127.0.0.1"]

    with pytest.raises(FetchRefused, match="the download failed"):
        await fetch(f"http://{HOST}:{internal.port}/report.csv")
    assert internal.hosts == [] and network.connects == [(PUBLIC, internal.port)]


async def test_a_redirect_is_looked_up_checked_and_pinned_again(network: Network, serve: Serve):
    internal = await serve(b"secret\n")
    outside = await serve(b"public\n", location=f"http://{HOST}:{internal.port}/report.csv")
    network.answers = [PUBLIC, "127.0.0.1"]  # the second hop's lookup is the rebinding one
    network.routes = {(PUBLIC, internal.port): outside.port}

    with pytest.raises(FetchRefused, match="private or loopback"):
        await fetch(f"http://{HOST}:{internal.port}/moved")
    assert internal.hosts == [] and outside.hosts == [f"{HOST}:{internal.port}"]
    assert network.lookups == 2 and network.connects == [(PUBLIC, internal.port)]


async def test_redirects_within_a_public_site_are_followed_each_to_its_checked_address(
    network: Network, serve: Serve
):
    outside = await serve(b"region,sales\n")
    network.routes = {(PUBLIC, 80): outside.port}

    assert await fetch(f"http://{HOST}/moved") == (b"region,sales\n", "text/csv")
    assert outside.hosts == [HOST, HOST] and network.lookups == 2
    assert network.connects == [(PUBLIC, 80), (PUBLIC, 80)]


async def test_an_address_that_does_not_answer_gives_way_to_the_next_one_checked(
    network: Network, serve: Serve
):
    outside = await serve(b"region,sales\n")
    network.answers = [(PUBLIC, PUBLIC_TOO)]
    network.routes = {(PUBLIC_TOO, 80): outside.port}

    assert await fetch(f"http://{HOST}/report.csv") == (b"region,sales\n", "text/csv")
    assert network.lookups == 1 and network.connects == [(PUBLIC, 80), (PUBLIC_TOO, 80)]


async def test_a_name_with_one_internal_address_among_public_ones_is_refused(network: Network, serve: Serve):
    internal = await serve(b"secret\n")
    network.answers = [(PUBLIC, "127.0.0.1")]

    with pytest.raises(FetchRefused, match="private or loopback"):
        await fetch(f"http://{HOST}:{internal.port}/report.csv")
    assert internal.hosts == [] and network.connects == []


def certificate(tmp_path: Path, name: str) -> tuple[Path, Path]:
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is needed to make a certificate for an HTTPS server")
    key, cert = tmp_path / f"{name}.key", tmp_path / f"{name}.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", f"/CN={name}"]
        + ["-addext", f"subjectAltName=DNS:{name}", "-keyout", str(key), "-out", str(cert)],
        check=True,
        capture_output=True,
    )
    return key, cert


def server_tls(key: Path, cert: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    return context


async def test_https_to_the_checked_address_sends_the_host_as_sni_and_checks_its_certificate(
    network: Network, serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    key, cert = certificate(tmp_path, HOST)  # names the host, not the address connected to
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # trusted as an operator's own CA is
    outside = await serve(b"region,sales\n", tls=server_tls(key, cert))
    network.routes = {(PUBLIC, 443): outside.port}

    assert await fetch(f"https://{HOST}/report.csv") == (b"region,sales\n", "text/csv")
    assert outside.names == [HOST] and outside.hosts == [HOST]
    assert network.connects == [(PUBLIC, 443)]


async def test_https_with_a_certificate_for_another_host_is_refused(
    network: Network, serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    key, cert = certificate(tmp_path, "other.example")
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    outside = await serve(b"region,sales\n", tls=server_tls(key, cert))
    network.routes = {(PUBLIC, 443): outside.port}

    with pytest.raises(FetchRefused, match="the download failed"):
        await fetch(f"https://{HOST}/report.csv")
    assert outside.hosts == [] and outside.names == [HOST]


async def test_a_proxy_the_environment_names_carries_the_fetch_by_name_after_the_check(
    network: Network, monkeypatch: pytest.MonkeyPatch
):
    seen: list[str] = []

    async def proxy(request: web.Request) -> web.Response:  # an HTTP proxy gets the absolute URL
        seen.append(str(request.url))
        return web.Response(body=b"via proxy\n", content_type="text/csv")

    app = web.Application()
    app.router.add_get("/{tail:.*}", proxy)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{port}")
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    try:
        assert await fetch(f"http://{HOST}/report.csv") == (b"via proxy\n", "text/csv")
        assert seen == [f"http://{HOST}/report.csv"]  # by name: the proxy connects
        assert network.connects == [("127.0.0.1", port)]

        network.answers = ["10.0.0.7"]  # the check still refuses a name that is internal
        with pytest.raises(FetchRefused, match="private or loopback"):
            await fetch(f"http://{HOST}/report.csv")
        assert len(seen) == 1
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(
    "address",
    ["::1", "::ffff:127.0.0.1", "fe80::1", "64:ff9b::a00:7", "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe"],
)
async def test_internal_addresses_written_as_ipv6_are_refused(network: Network, address: str):
    network.answers = [address]  # loopback, mapped, link-local, NAT64 of 10.0.0.7 / 127.0.0.1 / metadata

    with pytest.raises(FetchRefused, match="private or loopback"):
        await check_address(f"http://{HOST}/report.csv", allow_private=False)


async def test_a_nat64_address_of_a_public_one_passes_the_check(network: Network):
    network.answers = ["64:ff9b::5db8:d822"]  # 93.184.216.34 through a NAT64 gateway

    assert await check_address(f"http://{HOST}/report.csv", allow_private=False) == ["64:ff9b::5db8:d822"]


@pytest.mark.parametrize("bypass", ["{host}:{port}", "http://{host}:{port}"])
async def test_a_no_proxy_entry_httpx_reads_otherwise_never_lets_a_rebinding_name_in(
    network: Network, serve: Serve, monkeypatch: pytest.MonkeyPatch, bypass: str
):
    internal = await serve(b"secret\n")
    proxy = await serve(b"via proxy\n")  # an HTTP proxy: gets the absolute URL, answers itself
    network.answers = [PUBLIC, "127.0.0.1"]  # the check hears a public address, a later lookup not
    for name in ("HTTP_PROXY", "http_proxy"):
        monkeypatch.setenv(name, f"http://127.0.0.1:{proxy.port}")
    for name in ("NO_PROXY", "no_proxy"):  # entries with a port or a scheme: httpx honours them
        monkeypatch.setenv(name, bypass.format(host=HOST, port=internal.port))

    assert await fetch(f"http://{HOST}:{internal.port}/report.csv") == (b"via proxy\n", "text/csv")
    assert internal.hosts == [] and network.lookups == 1


async def test_an_address_that_never_answers_gives_way_to_the_next_one_checked(
    network: Network, serve: Serve
):
    outside = await serve(b"region,sales\n")
    silent = socket.socket()  # a listener whose queue is full: a connection to it is never taken
    silent.bind(("127.0.0.1", 0))
    silent.listen(0)
    filler = socket.create_connection(silent.getsockname())
    network.answers = [(PUBLIC, PUBLIC_TOO)]
    network.routes = {(PUBLIC, 80): silent.getsockname()[1], (PUBLIC_TOO, 80): outside.port}
    try:
        assert await fetch_capped(f"http://{HOST}/report.csv", 1024, allow_private=False, seconds=0.5) == (
            b"region,sales\n",
            "text/csv",
        )
        assert network.connects == [(PUBLIC, 80), (PUBLIC_TOO, 80)]
    finally:
        filler.close()
        silent.close()
