"""Connecting to Redis: redis-py's asyncio client (hiredis parser), set up for a long-lived gateway.

Every client the store, ``serve``'s identity check and ``clarigate admin`` open comes from
``open_redis``:

- the URL means what it means to redis-py (``redis://``, ``rediss://`` for TLS, ``unix://``),
  plus ``redis+sentinel://`` / ``rediss+sentinel://`` for a master found through Sentinel; a URL
  redis-py would take wrongly or fail on only at the first command (a database that is not a
  number, an option it does not know) is refused at once, with ``ValueError``;
- TCP keepalive on, and a ``PING`` before reusing a connection idle for ``HEALTH_CHECK_SECONDS``,
  so a connection a firewall or a failover silently dropped is noticed before a command is lost
  on it;
- commands that fail on a lost connection or a timeout are sent again ``retries`` times with
  jittered backoff (redis-py's ``Retry``): the store only sends commands that are safe to repeat
  that way, and opens a client with ``retries=0`` for the ones that are not;
- nothing beyond ``AUTH`` / ``SELECT`` at connect (no ``CLIENT SETNAME`` / ``SETINFO`` unless the
  URL asks for ``client_name``), so an ACL user with only the store's commands can connect
  (deploy/README.md lists them);
- replies come back as Redis sends them (strings decoded, no per-command reshaping): the store's
  scripts and commands read them as such.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from redis.asyncio import Redis
from redis.asyncio.connection import ConnectionPool, UnixDomainSocketConnection, parse_url
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import MasterNotFoundError, Sentinel
from redis.backoff import ExponentialWithJitterBackoff, NoBackoff
from redis.exceptions import AuthenticationError, RedisError

from clarigate.gateway.runtime.redaction import redact, url_secrets

#: A connection idle this long is checked with ``PING`` before its next command (seconds).
HEALTH_CHECK_SECONDS = 15
#: Defaults a URL may override (``?socket_timeout=…``).
REPLY_TIMEOUT_SECONDS = 10.0
CONNECT_TIMEOUT_SECONDS = 2.0
#: Connections one client may open: one per call in flight (reused after), so room for every run
#: in flight at once; redis-py's default of 100 failed bursts with "Too many connections".
#: (A waiting BlockingConnectionPool left a cancelled task hanging at shutdown, so not that.)
MAX_CONNECTIONS = 1000
#: Re-sends of a store call made while a webhook is handled (``deadline``): a Redis restart or
#: failover refuses connections for a second or two, and 8 re-sends 50 ms to 0.5 s apart
#: (jittered) wait about 2.5 s (at least ~1 s), the ack's budget; the other calls keep 3.
WEBHOOK_RETRIES = 8

SENTINEL_SCHEMES = ("redis+sentinel", "rediss+sentinel")
#: The schemes a Redis URL may have, in words (redis-py's own list leaves out Sentinel's).
SCHEMES_SAID = "redis://, rediss:// (TLS), unix:// or redis+sentinel:// / rediss+sentinel:// (Sentinel)"


def _retry(retries: int) -> Retry:
    if retries <= 0:
        return Retry(NoBackoff(), 0)
    # a Redis restart or failover takes a second or two: 0.05, 0.1, 0.2 … capped at 0.5 s, jittered
    return Retry(ExponentialWithJitterBackoff(base=0.05, cap=0.5), retries)


def _defaults(retries: int) -> dict[str, Any]:
    return {
        "decode_responses": True,
        "socket_timeout": REPLY_TIMEOUT_SECONDS,
        "socket_connect_timeout": CONNECT_TIMEOUT_SECONDS,
        "socket_keepalive": True,
        "health_check_interval": HEALTH_CHECK_SECONDS,
        "retry": _retry(retries),
        "driver_info": None,
        # RESP2: replies keep the shapes the scripts and parsing here expect, on every server version
        "protocol": 2,
    }


def open_redis(url: str, *, retries: int = 3, parsed_replies: bool = False) -> Redis:
    """A client for ``url`` (see the module docstring); connects on first use.

    ``parsed_replies``: replies shaped the way redis-py shapes them (``HGETALL`` a dict, ``XINFO``
    dicts, …), for code written against redis-py's commands (``clarigate admin``) rather than
    against the raw replies the store's scripts expect.
    """
    scheme = urlsplit(url).scheme.lower()
    try:
        if scheme not in ("redis", "rediss", "unix", *SENTINEL_SCHEMES):
            raise ValueError(f"a Redis URL starts with {SCHEMES_SAID}, not {scheme or 'no scheme'}://")
        client = _sentinel_master(url, retries) if scheme in SENTINEL_SCHEMES else _direct(url, retries)
    except (ValueError, RedisError) as exc:  # a URL no client can use, said without its user and password
        raise ValueError(_without_secrets_of(url, str(exc).strip().split("\n")[0])) from None
    if not parsed_replies:
        # raw replies: ``SET … GET`` gives the old value, ``XREADGROUP`` its nested arrays, as in redis-cli
        client.response_callbacks.clear()
    return client


def _direct(url: str, retries: int) -> Redis:
    options = _defaults(retries)
    # the URL's own options (socket_timeout, ssl_ca_certs, client_name…) win over the defaults
    options.update(parse_url(url))
    if options.get("connection_class") is UnixDomainSocketConnection:
        options.pop("socket_keepalive", None)  # not a TCP socket
    options.setdefault("max_connections", MAX_CONNECTIONS)
    _check_database(url)
    pool = ConnectionPool(**options)
    try:  # a connection made here opens no socket; an option redis-py does not know fails now
        pool.connection_class(**pool.connection_kwargs)
    except TypeError as exc:
        raise ValueError(f"an option of the Redis URL is not one redis-py knows: {exc}") from exc
    return Redis.from_pool(pool)


def _without_secrets_of(url: str, message: str) -> str:
    """``message`` with every piece of the URL's user and password and its secrets
    (``url_secrets``) masked (a password holding ``/`` or ``#`` unescaped ends up in redis-py's
    words about the port)."""
    user_info = url.partition("://")[2].rpartition("@")[0]
    pieces = set(re.split(r"[:/@?#]", user_info)) | {user_info, unquote(user_info), *url_secrets(url)}
    for piece in sorted(pieces, key=len, reverse=True):
        if len(piece) >= 3:
            message = message.replace(piece, "***")
    return redact(message)


def _check_database(url: str) -> None:
    """redis-py reads a database that is not a number (``redis://host:6379/bot``) as database 0,
    without a word: say it instead."""
    parts = urlsplit(url)
    if parts.scheme.lower() in ("redis", "rediss"):
        database = unquote(parts.path).strip("/")
        if database and not database.isdigit():
            raise ValueError(
                f"the Redis URL's database must be a number (redis://host:6379/0), not {database!r}"
            )


def _sentinel_master(url: str, retries: int) -> Redis:
    """``redis+sentinel://[user:password@]host:port[,host:port…]/service[/db][?options]``.

    The user and password are the master's; ``sentinel_username`` / ``sentinel_password`` in the
    query authenticate to the Sentinels when they need it. ``rediss+sentinel`` speaks TLS to the
    master (``ssl_ca_certs`` etc. as for ``rediss://``).
    """
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)
    hosts_text = netloc[-1]
    sentinels = []
    for host in hosts_text.split(","):
        name, _, port = host.rpartition(":")
        if not name:
            name, port = port, "26379"
        sentinels.append((name.strip("[]"), int(port or 26379)))
    path = [unquote(p) for p in parts.path.split("/") if p]
    if not path:
        raise ValueError(
            "a redis+sentinel:// URL names the master's service: redis+sentinel://host:26379/mymaster"
        )
    query = dict(parse_qsl(parts.query))
    options = _defaults(retries)
    if len(path) > 1:
        options["db"] = int(path[1])
    if parts.username:
        options["username"] = unquote(parts.username)
    if parts.password:
        options["password"] = unquote(parts.password)
    sentinel_options: dict[str, Any] = {
        "socket_timeout": options["socket_timeout"],
        "socket_connect_timeout": options["socket_connect_timeout"],
        "socket_keepalive": True,
        "decode_responses": True,
        "driver_info": None,
    }
    for key in ("sentinel_username", "sentinel_password"):
        if key in query:
            sentinel_options[key.removeprefix("sentinel_")] = query.pop(key)
    # the other query options are connection options, typed as redis-py types them
    typed = parse_url("redis://localhost/?" + "&".join(f"{k}={v}" for k, v in query.items())) if query else {}
    typed.pop("host", None)
    options.update(typed)
    if parts.scheme == "rediss+sentinel":
        options["ssl"] = True
    # Sentinel's pool does not wait for a free connection: room for every run in flight
    options.setdefault("max_connections", 1000)
    manager = _Sentinels(sentinels, sentinel_kwargs=sentinel_options, **options)
    client: Redis = manager.master_for(path[0], redis_class=Redis)
    return client


class SentinelsRefused(AuthenticationError):
    """The Sentinels answered and refused our credentials (``sentinel_password`` /
    ``sentinel_username``), so no master could be asked for: waiting cannot mend that."""


class _Sentinels(Sentinel):
    """redis-py's ``Sentinel``, whose "no master found" is one line saying what each Sentinel said
    (redis-py's quotes each Sentinel client's repr, some 1,500 characters apiece), and whose
    refusal of our credentials is ``SentinelsRefused``, not a master that cannot be reached."""

    async def discover_master(self, service_name: str) -> tuple[str, int]:
        """The master's address, from the first Sentinel that sees it up (moved to the front)."""
        said, refused = [], []
        for number, sentinel in enumerate(self.sentinels):
            options = sentinel.connection_pool.connection_kwargs
            at = f"Sentinel at {options.get('host')}:{options.get('port')}"
            try:
                masters: Any = await sentinel.sentinel_masters()  # {name: state}
            except AuthenticationError as exc:  # WRONGPASS, NOAUTH: a password, not an outage
                refused.append(why_not_reached(exc, at).rstrip("."))
                continue
            except RedisError as exc:
                said.append(why_not_reached(exc, at))
                continue
            state = masters.get(service_name)
            if state and self.check_master_state(state, service_name):
                self.sentinels[0], self.sentinels[number] = sentinel, self.sentinels[0]
                forced = getattr(self, "_force_master_ip", None)  # redis-py 5.1 on
                return (forced if forced is not None else state["ip"]), state["port"]
            said.append(f"{at} {'sees it down' if state else 'monitors no master of that name'}")
        if refused and not said:  # every Sentinel answered, and none took our credentials
            raise SentinelsRefused("; ".join(refused))
        raise MasterNotFoundError(f"no master {service_name!r} found: {'; '.join(said + refused)}")


def why_not_reached(exc: BaseException, at: str = "") -> str:
    """Why a connection to Redis (``at``: what it is, ``Sentinel at host:port``) failed, in a line:
    "… refused the connection" when nothing listens there, else the error's first line."""
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ConnectionRefusedError):
        cause = cause.__cause__ or cause.__context__
    text = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    if cause is not None:  # redis-py: "Error 111 connecting to 127.0.0.1:1. Connect call failed (…)."
        address = re.search(r"connecting to (\S+?)\.?(?:\s|$)", text)
        return f"{at or (address[1] if address else 'Redis')} refused the connection"
    return f"{at}: {text}" if at else text


def describe(url: str) -> str:
    """Where ``url`` points, without its credentials (for logs and error messages)."""
    parts = urlsplit(url)
    where = parts.netloc.rsplit("@", 1)[-1] or parts.path
    return f"{parts.scheme}://{where}"


def unreachable(exc: BaseException) -> bool:
    """True when ``exc`` says Redis could not be reached or could not serve yet (a lost
    connection, a timeout, a Redis still loading its data after a restart, a replica promoted
    midway): an outage to wait out, not a failure of the job."""
    from redis.exceptions import ConnectionError as Lost
    from redis.exceptions import ReadOnlyError
    from redis.exceptions import TimeoutError as TimedOut

    return isinstance(exc, Lost | TimedOut | ReadOnlyError)
