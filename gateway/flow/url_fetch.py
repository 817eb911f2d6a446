"""Fetching a file the agent names by URL, for sending it on (called by a worker, in the run step).

Only ``http`` and ``https``; the size is capped while downloading (a server that does not say,
or lies, is cut off at the cap); redirects are followed by hand, a few at most, each address
checked again. A host that resolves to a private, loopback, link-local or otherwise internal
address is refused unless the operator allows it (``files_out.allow_private_urls``): the URL
comes from the model, which may have read it anywhere, and the gateway must not become a way
into the network it runs in. The host is looked up once per request and the connection goes to
an address that lookup gave and the check passed (the URL's host still names the site: the
``Host`` header, TLS SNI and the certificate checked), so a name server that answers a public
address to the check and an internal one a moment later is not followed. Where the environment
names a proxy for the URL (``HTTPS_PROXY``/``HTTP_PROXY``/``ALL_PROXY``, not bypassed by
``NO_PROXY``), the fetch goes through it by name after the same check: the proxy makes the
connection, and its own lookup and policy guard it (a worker whose only way out is a proxy keeps
fetching). With internal addresses allowed, httpx resolves and connects by name, as any client.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from urllib.parse import urljoin

import httpx

#: Redirects followed at most.
MAX_REDIRECTS = 3
_REDIRECTS = {301, 302, 303, 307, 308}


class FetchRefused(Exception):
    """The URL is not fetched or gave nothing (a scheme, an address, an answer): ``str`` says why."""


class FetchTooLarge(Exception):
    """The file is larger than the cap; ``size`` when the server said how large."""

    def __init__(self, size: int | None = None) -> None:
        super().__init__(f"larger than the cap ({size} bytes)" if size else "larger than the cap")
        self.size = size


#: NAT64's well-known prefix (RFC 6052): its addresses carry an IPv4 address in their last 32 bits.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    elif isinstance(ip, ipaddress.IPv6Address) and ip in _NAT64:  # a NAT64 gateway reaches the IPv4 inside
        ip = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return not ip.is_global or ip.is_multicast


def _parsed(url: str) -> httpx.URL:
    """``url`` as httpx reads it (the very reading the request is made from); ``FetchRefused``
    for one that is not http(s) or has no host."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as error:
        raise FetchRefused(f"the URL is not valid ({error})") from None
    if parsed.scheme not in ("http", "https") or not parsed.raw_host:
        raise FetchRefused(f"only http and https URLs are fetched, not {parsed.scheme or 'this'!r}")
    return parsed


async def check_address(url: str, allow_private: bool) -> list[str]:
    """The addresses ``url``'s host resolves to, each one checked: the request is to connect to
    one of them and to nothing else (none while internal addresses are allowed: the host is then
    left to httpx). ``FetchRefused`` for a URL that is not http(s), a host that does not resolve,
    or one with an internal address among its addresses while those are not allowed."""
    parsed = _parsed(url)
    if allow_private:
        return []
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(
            parsed.raw_host.decode("ascii"), port, type=socket.SOCK_STREAM
        )
    except OSError as error:
        raise FetchRefused(f"the host does not resolve ({error})") from None
    addresses = list(dict.fromkeys(str(info[4][0]) for info in found))
    if not addresses or any(_internal(address) for address in addresses):
        raise FetchRefused("the host is a private or loopback address (files_out.allow_private_urls)")
    return addresses


async def fetch_capped(url: str, max_bytes: int, *, allow_private: bool, seconds: float) -> tuple[bytes, str]:
    """The bytes at ``url`` and the type the server gave (empty when none); ``FetchTooLarge`` past
    ``max_bytes``, ``FetchRefused`` for an address not fetched or an answer other than 200."""
    try:
        return await _fetch(url, max_bytes, allow_private, seconds)
    except httpx.HTTPError as error:  # the network, a timeout, a broken answer
        raise FetchRefused(f"the download failed ({type(error).__name__})") from None


async def _fetch(url: str, max_bytes: int, allow_private: bool, seconds: float) -> tuple[bytes, str]:
    for _ in range(MAX_REDIRECTS + 1):
        addresses = await check_address(url, allow_private)
        proxy = _proxy(url) if addresses else None
        if proxy is not None:
            addresses = []  # by name, through the proxy (see the module's docstring)
        async with _response(url, addresses, seconds, proxy) as response:
            if response.status_code in _REDIRECTS and "location" in response.headers:
                url = urljoin(url, response.headers["location"])
                continue
            if response.status_code != 200:
                raise FetchRefused(f"the server answered {response.status_code}")
            said = response.headers.get("content-length", "")
            if said.isdigit() and int(said) > max_bytes:
                raise FetchTooLarge(int(said))
            data = bytearray()
            async for chunk in response.aiter_bytes():
                data += chunk
                if len(data) > max_bytes:
                    raise FetchTooLarge()
            kind = response.headers.get("content-type", "").split(";", 1)[0].strip()
            return bytes(data), kind
    raise FetchRefused(f"more than {MAX_REDIRECTS} redirects")


def _proxy(url: str) -> str | None:
    """The proxy the environment names for ``url`` (``*_PROXY``, not bypassed by ``NO_PROXY``), or
    None. It is handed to httpx as is: httpx reads some ``NO_PROXY`` entries otherwise (with a port
    or a scheme), and would go to the name directly, looking it up again."""
    parsed = _parsed(url)
    proxies = urllib.request.getproxies()
    proxy = proxies.get(parsed.scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass(parsed.raw_host.decode("ascii")):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"


@asynccontextmanager
async def _response(
    url: str, addresses: list[str], seconds: float, proxy: str | None = None
) -> AsyncIterator[httpx.Response]:
    """The answer to a GET of ``url``, its body still to read, from the first of ``addresses`` that
    takes the connection (by the host's name when there are none, through ``proxy`` when one is
    given, else as the environment says with internal addresses allowed). A client of its own for each
    request: a connection opened, and its certificate checked, for one host is never reused for
    another that happens to share its address."""
    pinned = bool(addresses)
    async with httpx.AsyncClient(
        timeout=seconds,
        follow_redirects=False,
        verify=httpx.create_ssl_context(),
        proxy=proxy,
        trust_env=not pinned and proxy is None,
    ) as client:
        for address in addresses[:-1]:
            try:
                response = await client.send(_request(client, url, address), stream=True)
                break
            except (httpx.ConnectError, httpx.ConnectTimeout):  # refused, unreachable, silent: the next one
                continue
        else:
            response = await client.send(
                _request(client, url, addresses[-1] if pinned else None), stream=True
            )
        try:
            yield response
        finally:
            await response.aclose()


def _request(client: httpx.AsyncClient, url: str, address: str | None) -> httpx.Request:
    """A GET of ``url`` that connects to ``address`` (to the host by name when ``None``) while the
    URL's host names the site: the ``Host`` header, and the TLS server name (SNI) the certificate
    is checked against (httpx's ``sni_hostname`` request extension)."""
    if address is None:
        return client.build_request("GET", url)
    parsed = _parsed(url)
    return client.build_request(
        "GET",
        parsed.copy_with(host=address),
        headers={"Host": parsed.netloc.decode("ascii")},
        extensions={"sni_hostname": parsed.raw_host.decode("ascii")},
    )
