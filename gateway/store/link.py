"""One multiplexed connection to Redis: commands from every task share it, pipelined.

Why the store does not send its commands through redis-py's client: each command there takes a
connection from the pool, passes a retry wrapper, event hooks and observability recorders, and
costs ~80-110 µs of client CPU here, against ~20 µs for the round trip itself
(bench/README.md). The gateway sends two scripts per message, so that difference alone was a
tenth of an agent turn.

A link keeps one connection and writes each command on it at once, from whichever task sends
it; Redis answers in order, so each reply resolves the oldest waiting future. Packing and
parsing are hiredis' (the C parser redis-py itself uses when it is installed), the URL means
what it means to redis-py (``redis.connection.parse_url``) and errors are redis-py's exception
types, so callers and operators see what they would see with redis-py.

What callers can rely on:

- A command that fails on a lost connection is sent again on a new one, ``retries`` times with
  exponential backoff (as redis-py's ``Retry``): every command the store sends is safe to
  repeat, since its scripts recognize their own earlier effect.
- A reply later than ``reply_timeout`` closes the connection (the replies behind it could no
  longer be matched to their commands) and the command is retried.
- A blocking command (``XREADGROUP … BLOCK``) holds every reply behind it, so it goes on a link
  of its own, made with ``close_on_cancel=True``: a cancelled blocking read closes the
  connection, and Redis does not hand entries to a read nobody waits for.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import ssl
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import hiredis
from redis import exceptions as errors
from redis.connection import SSLConnection, UnixDomainSocketConnection, parse_url

log = logging.getLogger(__name__)

#: URL options a link honours; any other (redis-py pool tuning) is named in a warning and ignored.
_KNOWN_OPTIONS = {
    "host",
    "port",
    "db",
    "username",
    "password",
    "path",
    "connection_class",
    "socket_timeout",
    "socket_connect_timeout",
    "client_name",
    "ssl_cert_reqs",
    "ssl_ca_certs",
    "ssl_certfile",
    "ssl_keyfile",
    "ssl_check_hostname",
}


@dataclass(frozen=True)
class Script:
    """A Lua script, sent by its SHA1 (loaded on the first ``NOSCRIPT``)."""

    source: str
    sha: str = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "sha", hashlib.sha1(self.source.encode()).hexdigest())


@dataclass
class LinkOptions:
    """Where and how to connect, read from a ``redis://``, ``rediss://`` or ``unix://`` URL."""

    host: str = "127.0.0.1"
    port: int = 6379
    path: str | None = None  # a Unix socket instead of TCP
    db: int = 0
    username: str | None = None
    password: str | None = None
    client_name: str | None = None
    connect_timeout: float = 2.0
    reply_timeout: float = 10.0
    tls: ssl.SSLContext | None = None

    @classmethod
    def from_url(
        cls, url: str, *, client_name: str | None, connect_timeout: float, reply_timeout: float
    ) -> LinkOptions:
        """Options from ``url``; the keyword arguments apply where the URL does not say otherwise."""
        parsed = parse_url(url)
        ignored = sorted(set(parsed) - _KNOWN_OPTIONS)
        if ignored:
            log.warning("Redis URL options not used by the store: %s", ", ".join(ignored))
        kind = parsed.get("connection_class")
        return cls(
            host=parsed.get("host") or "127.0.0.1",
            port=int(parsed.get("port") or 6379),
            path=parsed["path"] if kind is UnixDomainSocketConnection else None,
            db=int(parsed.get("db") or 0),
            username=parsed.get("username"),
            password=parsed.get("password"),
            client_name=parsed.get("client_name") or client_name,
            connect_timeout=float(parsed.get("socket_connect_timeout") or connect_timeout),
            reply_timeout=float(parsed.get("socket_timeout") or reply_timeout),
            tls=_tls_context(parsed) if kind is SSLConnection else None,
        )

    @property
    def where(self) -> str:
        """The server's address, for error messages."""
        return f"unix:{self.path}" if self.path else f"{self.host}:{self.port}"


def _tls_context(parsed: dict[str, Any]) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=parsed.get("ssl_ca_certs"))
    if parsed.get("ssl_certfile"):
        context.load_cert_chain(parsed["ssl_certfile"], parsed.get("ssl_keyfile"))
    requirement = str(parsed.get("ssl_cert_reqs") or "required").lower()
    if requirement == "none":  # the operator chose not to verify (check_hostname must go first)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        return context
    if parsed.get("ssl_check_hostname") is not None:
        context.check_hostname = bool(parsed["ssl_check_hostname"])
    if requirement == "optional":
        context.verify_mode = ssl.CERT_OPTIONAL
    return context


def _reply_error(error: hiredis.ReplyError) -> errors.RedisError:
    """redis-py's exception for an error reply (``LOADING`` is worth a retry, as there)."""
    message = str(error)
    if message.startswith("NOSCRIPT"):
        return errors.NoScriptError(message)
    if message.startswith("LOADING"):
        return errors.BusyLoadingError(message)
    if message.startswith(("WRONGPASS", "NOAUTH")):
        return errors.AuthenticationError(message)
    return errors.ResponseError(message)


class _Replies(asyncio.Protocol):
    """The connection's protocol: parses replies and resolves the waiting futures in order."""

    def __init__(self) -> None:
        self.reader = hiredis.Reader(encoding="utf-8")
        self.waiting: deque[tuple[asyncio.Future[Any], float]] = deque()  # (future, deadline)
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        """Keep the transport to write commands on."""
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        """Resolve one waiting future per complete reply."""
        self.reader.feed(data)
        waiting = self.waiting
        try:
            while (reply := self.reader.gets()) is not False:
                future = waiting.popleft()[0]
                if future.done():
                    continue  # its caller gave up waiting
                if isinstance(reply, hiredis.ReplyError):
                    future.set_exception(_reply_error(reply))
                else:
                    future.set_result(reply)
        except (hiredis.ProtocolError, UnicodeDecodeError, IndexError) as exc:
            log.error("unreadable reply from Redis (%s): closing the connection", exc)
            self.close(errors.ConnectionError(f"unreadable reply from Redis: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        """Fail every command still waiting: its caller retries on a new connection."""
        self.lost = True
        self._fail_all(errors.ConnectionError(f"connection to Redis lost: {exc or 'closed by the server'}"))

    def close(self, error: Exception) -> None:
        """Drop the connection now, failing what waits with ``error``."""
        self.lost = True
        self._fail_all(error)
        if self.transport is not None:
            with contextlib.suppress(RuntimeError):  # its event loop is closed: nothing left to do
                self.transport.abort()

    def _fail_all(self, error: Exception) -> None:
        while self.waiting:
            future = self.waiting.popleft()[0]
            if not future.done():
                with contextlib.suppress(RuntimeError):  # a future of an event loop now closed
                    future.set_exception(error)

    @property
    def usable(self) -> bool:
        return not self.lost and self.transport is not None and not self.transport.is_closing()


class RedisLink:
    """A multiplexed, pipelined connection to one Redis server (see the module docstring)."""

    def __init__(
        self,
        url: str,
        *,
        client_name: str | None = None,
        connect_timeout: float = 2.0,
        reply_timeout: float = 10.0,
        retries: int = 3,
        close_on_cancel: bool = False,
    ) -> None:
        self.options = LinkOptions.from_url(
            url, client_name=client_name, connect_timeout=connect_timeout, reply_timeout=reply_timeout
        )
        self.retries = retries
        self.close_on_cancel = close_on_cancel
        self._replies: _Replies | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connecting: asyncio.Lock | None = None
        self._watchdog: asyncio.TimerHandle | None = None
        self._closed = False

    async def execute(self, *args: str | int | float | bytes, reply_within: float | None = None) -> Any:
        """Send one command and return its reply; ``reply_within`` (seconds) overrides the reply timeout."""
        wait = self.options.reply_timeout if reply_within is None else reply_within
        attempt = 0
        while True:
            try:
                return await self._send(args, wait)
            except errors.AuthenticationError:
                raise  # a wrong password stays wrong: retrying only delays the error
            except (errors.ConnectionError, errors.TimeoutError):
                if attempt >= self.retries or self._closed:
                    raise
                attempt += 1
                await asyncio.sleep(min(0.5, 0.05 * 2**attempt))

    async def evalsha(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """Run ``script`` by its SHA1; loads it first when Redis does not know it (a restart, a flush)."""
        try:
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)
        except errors.NoScriptError:
            await self.execute("SCRIPT", "LOAD", script.source)
            return await self.execute("EVALSHA", script.sha, len(keys), *keys, *args)

    async def close(self) -> None:
        """Close the connection; commands still waiting fail with ``ConnectionError``."""
        self._closed = True
        self._drop(errors.ConnectionError("the Redis link was closed"))

    # --- one command --------------------------------------------------------------------------

    async def _send(self, args: tuple[Any, ...], wait: float) -> Any:
        replies = self._replies
        loop = asyncio.get_running_loop()
        if replies is None or not replies.usable or loop is not self._loop:
            replies = await self._connect(loop)
        future = loop.create_future()
        replies.waiting.append((future, time.monotonic() + wait))
        replies.transport.write(hiredis.pack_command(args))  # type: ignore[union-attr]
        if self._watchdog is None:
            self._arm_watchdog(loop)
        try:
            return await future
        except asyncio.CancelledError:
            if self.close_on_cancel and replies.waiting:
                replies.close(errors.ConnectionError("a blocking command was cancelled"))
            raise

    def _arm_watchdog(self, loop: asyncio.AbstractEventLoop) -> None:
        interval = min(0.5, max(self.options.reply_timeout / 4, 0.01))
        self._watchdog = loop.call_later(interval, self._check_deadlines, loop)

    def _check_deadlines(self, loop: asyncio.AbstractEventLoop) -> None:
        """Close a connection whose oldest waiting reply is overdue; re-arm while commands wait."""
        self._watchdog = None
        replies = self._replies
        if replies is None or not replies.waiting:
            return
        now = time.monotonic()
        if any(deadline < now for _, deadline in replies.waiting):
            log.warning("Redis at %s did not answer in time: reconnecting", self.options.where)
            replies.close(errors.TimeoutError(f"no reply from Redis at {self.options.where} in time"))
            return
        self._arm_watchdog(loop)

    # --- connecting ---------------------------------------------------------------------------

    async def _connect(self, loop: asyncio.AbstractEventLoop) -> _Replies:
        if self._closed:
            raise errors.ConnectionError("the Redis link was closed")
        if loop is not self._loop:  # first use, or a new event loop (a transport cannot follow)
            self._drop(errors.ConnectionError("the event loop changed"))
            self._loop, self._connecting = loop, asyncio.Lock()
        assert self._connecting is not None
        async with self._connecting:
            if self._replies is not None and self._replies.usable:
                return self._replies  # another task connected meanwhile
            replies = await self._open(loop)
            self._replies = replies
            return replies

    async def _open(self, loop: asyncio.AbstractEventLoop) -> _Replies:
        options = self.options
        replies: _Replies | None = None
        try:
            async with asyncio.timeout(options.connect_timeout):
                if options.path:
                    _, replies = await loop.create_unix_connection(_Replies, options.path)
                else:
                    _, replies = await loop.create_connection(
                        _Replies, options.host, options.port, ssl=options.tls
                    )
                await self._handshake(loop, replies)
        except BaseException as exc:
            if replies is not None:
                replies.close(errors.ConnectionError("could not finish connecting"))
            if isinstance(exc, errors.ResponseError | errors.AuthenticationError):
                raise  # refused by the server (a wrong password or database): said as it is
            if isinstance(exc, OSError | TimeoutError | errors.RedisError):
                raise errors.ConnectionError(f"Error connecting to Redis at {options.where}: {exc}") from exc
            raise
        return replies

    async def _handshake(self, loop: asyncio.AbstractEventLoop, replies: _Replies) -> None:
        """AUTH, SELECT and CLIENT SETNAME, pipelined; the first error reply is raised."""
        options = self.options
        commands: list[tuple[Any, ...]] = []
        if options.password is not None:
            credentials = (options.username, options.password) if options.username else (options.password,)
            commands.append(("AUTH", *credentials))
        if options.db:
            commands.append(("SELECT", options.db))
        if options.client_name:
            commands.append(("CLIENT", "SETNAME", options.client_name))
        if not commands:
            return
        futures: list[asyncio.Future[Any]] = [loop.create_future() for _ in commands]
        deadline = time.monotonic() + options.connect_timeout
        replies.waiting.extend((future, deadline) for future in futures)
        assert replies.transport is not None
        replies.transport.write(b"".join(hiredis.pack_command(command) for command in commands))
        for result in await asyncio.gather(*futures, return_exceptions=True):
            if isinstance(result, BaseException):
                raise result

    def _drop(self, error: Exception) -> None:
        if self._watchdog is not None:
            with contextlib.suppress(RuntimeError):  # its event loop may be closed already
                self._watchdog.cancel()
            self._watchdog = None
        if self._replies is not None:
            self._replies.close(error)
            self._replies = None
