"""Fetching a file the agent names by URL, for sending it on (called by a worker, in the run step).

Only ``http`` and ``https``; the size is capped while downloading (a server that does not say,
or lies, is cut off at the cap); redirects are followed by hand, a few at most, each address
checked again. A host that resolves to a private, loopback, link-local or otherwise internal
address is refused unless the operator allows it (``files_out.allow_private_urls``): the URL
comes from the model, which may have read it anywhere, and the gateway must not become a way
into the network it runs in.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from urllib.parse import urljoin, urlsplit

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


def _internal(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


async def check_address(url: str, allow_private: bool) -> None:
    """Raise ``FetchRefused`` for a URL that is not http(s), or whose host resolves to an internal
    address while those are not allowed."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise FetchRefused(f"only http and https URLs are fetched, not {parts.scheme or 'this'!r}")
    if allow_private:
        return
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        found = await asyncio.get_running_loop().getaddrinfo(parts.hostname, port, type=socket.SOCK_STREAM)
    except OSError as error:
        raise FetchRefused(f"the host does not resolve ({error})") from None
    if not found or any(_internal(str(info[4][0])) for info in found):
        raise FetchRefused("the host is a private or loopback address (files_out.allow_private_urls)")


async def fetch_capped(url: str, max_bytes: int, *, allow_private: bool, seconds: float) -> tuple[bytes, str]:
    """The bytes at ``url`` and the type the server gave (empty when none); ``FetchTooLarge`` past
    ``max_bytes``, ``FetchRefused`` for an address not fetched or an answer other than 200."""
    try:
        return await _fetch(url, max_bytes, allow_private, seconds)
    except httpx.HTTPError as error:  # the network, a timeout, a broken answer
        raise FetchRefused(f"the download failed ({type(error).__name__})") from None


async def _fetch(url: str, max_bytes: int, allow_private: bool, seconds: float) -> tuple[bytes, str]:
    async with httpx.AsyncClient(timeout=seconds, follow_redirects=False) as client:
        for _ in range(MAX_REDIRECTS + 1):
            await check_address(url, allow_private)
            async with client.stream("GET", url) as response:
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
