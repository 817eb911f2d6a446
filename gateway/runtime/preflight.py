"""What ``serve`` checks before it listens: every failure is one line and an exit code of its class.

Transient and permanent are told apart the way ``doctor`` tells them: a store or database that
is merely unreachable (refused, timed out, a name not resolving yet) is waited for, one line
per backoff step, for up to ``startup_wait_seconds`` (compose and Kubernetes start services
side by side); a wrong password, a missing database or a URL that cannot work stops the start
at once, since waiting cannot mend it.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import socket
from collections.abc import Awaitable, Callable
from dataclasses import replace
from enum import IntEnum
from typing import Any

from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.runtime.logs import without_secrets

log = logging.getLogger("clarigate.gateway.runtime.serve")


class ExitCode(IntEnum):
    """``clarigate serve``'s exit status per failure class (documented in deploy/README.md)."""

    OK = 0
    UNEXPECTED = 1  # a bug or an unforeseen error: the line names it; --log-level debug shows where
    CONFIG = 2  # the configuration (file, environment, flags) is invalid or incomplete, or its
    # data directory (CLARIGATE_DATA_DIR) cannot be made or written
    STORE_UNREACHABLE = 3  # Redis did not answer within startup_wait_seconds
    STORE_REFUSED = 4  # Redis answered but refused us (password, ACL, database index)
    DATABASE = 5  # the checkpointer's PostgreSQL: unreachable, refused or missing database
    MODEL = 6  # the agent's model: unknown id, missing provider package or key
    PLATFORM = 7  # a platform refused the credentials or could not be reached
    PORT = 8  # the HTTP port is in use or cannot be bound
    IDENTITY = 9  # another bot identity already runs under this bot id


class StartFailure(Exception):
    """Why the bot cannot start: one line for the operator and the exit code of its class."""

    def __init__(self, code: ExitCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def first_line(exc: BaseException) -> str:
    """The first non-empty line of an error message (libraries add hints on further lines)."""
    for line in str(exc).strip().splitlines():
        if line.strip():
            return line.strip()
    return type(exc).__name__


def agent_start_failure(
    exc: BaseException, model: str, server_url: str | None = None, data_dir: str | None = None
) -> StartFailure:
    """Why the agent did not start: a setting that does not apply where it runs, its files in
    ``data_dir`` or the SQLite file of CHECKPOINTER_URL that cannot be made (configuration problems,
    named), the LangGraph server at ``server_url`` (its own words name the setting to check), or
    the in-process agent's model, tools or MCP servers."""
    from clarigate.agent.placement import SettingsDoNotApply

    if isinstance(exc, SettingsDoNotApply):
        return StartFailure(ExitCode.CONFIG, str(exc))
    said: BaseException | None = exc
    while said is not None and not isinstance(said, StartFailure):  # said already, maybe in a route
        said = said.__cause__ or said.__context__
    if said is not None:
        return StartFailure(said.code, first_line(exc))  # ``route <name>: `` first, for a route's
    if data_dir is not None and (unusable := data_dir_failure(exc, data_dir)) is not None:
        return unusable
    if server_url:  # no model here: the server runs its own
        return StartFailure(
            ExitCode.MODEL, f"the agent could not start: {first_line(exc)} (`clarigate doctor` says more)"
        )
    return StartFailure(
        ExitCode.MODEL,
        f"the agent could not start: {first_line(exc)} (model {model!r}: check "
        "LLM_MODEL, its provider package and API key, agent.tools and agent.mcp_servers; "
        "`clarigate doctor` says more)",
    )


def _unusable(
    exc: BaseException | None, what: str, where: str, setting: str, within: bool
) -> StartFailure | None:
    """A configuration failure naming ``setting`` when ``exc`` (or what caused it) is the file
    system refusing ``where`` (``what``) or a folder on the way to it (``within``: or a path in
    it): a regular file there, no permission, a read-only disk; else None."""
    while exc is not None:
        if isinstance(exc, OSError) and isinstance(exc.filename, str | bytes):  # not an fd
            path = os.path.abspath(os.fsdecode(exc.filename))
            if os.path.commonpath([path, where]) in ((path, where) if within else (path,)):
                return StartFailure(
                    ExitCode.CONFIG,
                    f"{what} {where} ({setting}) cannot be used: {exc.strerror or type(exc).__name__}"
                    + ("" if path == where else f" ({path})")
                    + f"; point {setting} at a {('file', 'folder')[within]} this user can create and write",
                )
        exc = exc.__cause__ or exc.__context__
    return None


def data_dir_failure(exc: BaseException | None, data_dir: str) -> StartFailure | None:
    """A configuration failure naming CLARIGATE_DATA_DIR when ``exc`` (or what caused it) is the
    file system refusing a path in the data directory or a folder on the way to it; else None."""
    return _unusable(exc, "the data directory", os.path.abspath(data_dir), "CLARIGATE_DATA_DIR", within=True)


def checkpointer_failure(exc: BaseException, file: str) -> StartFailure | None:
    """A configuration failure naming CHECKPOINTER_URL when ``exc`` (or what caused it) is the file
    system refusing the SQLite ``file`` it names or a folder on the way to it; else None."""
    return _unusable(exc, "the checkpointer's file", os.path.abspath(file), "CHECKPOINTER_URL", within=False)


def port_problem(port: int) -> str | None:
    """Why ``serve`` cannot listen on ``port`` whatever the host (``doctor`` asks too), or None."""
    if not 0 <= port <= 65535:
        return f"--port / PORT {port} is out of range: use 1-65535"
    return None


#: The settings that hold the ports ``serve`` listens on, as a failure names them.
PORT_SETTING = "--port / PORT"
METRICS_PORT_SETTING = "metrics_port"


def bind_ports(host: str, port: int, metrics_port: int | None) -> tuple[socket.socket, socket.socket | None]:
    """The HTTP port's socket and ``metrics_port``'s (None when unset), each named when it fails."""
    if metrics_port is not None and metrics_port == port:
        raise StartFailure(ExitCode.CONFIG, metrics_port_clash(port))
    sock = bind_port(host, port)
    if not metrics_port:
        return sock, None
    try:
        return sock, bind_port(host, metrics_port, METRICS_PORT_SETTING)
    except BaseException:
        sock.close()
        raise


def metrics_port_clash(port: int) -> str:
    """What is wrong when ``metrics_port`` is the HTTP port (``serve`` and ``doctor`` say it alike)."""
    return (
        f"metrics_port {port} is the HTTP port ({PORT_SETTING}) too: set metrics_port to another port,"
        " or leave it unset to serve /metrics on the HTTP port"
    )


def bind_port(host: str, port: int, setting: str = PORT_SETTING) -> socket.socket:
    """The listening socket, bound now so that a taken port is said plainly, before anything starts
    (``setting``: what holds the port, named in the failure)."""
    problem = port_problem(port)
    if problem is not None:
        raise StartFailure(ExitCode.CONFIG, problem)
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
    except socket.gaierror as exc:
        raise StartFailure(ExitCode.CONFIG, f"--host {host!r} is not an address to listen on: {exc}") from exc
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise StartFailure(ExitCode.PORT, _cannot_listen(host, port, setting, exc)) from exc
    sock.set_inheritable(True)
    return sock


def start_listening(sock: socket.socket, setting: str = PORT_SETTING) -> None:
    """Listen on a socket ``bind_port`` bound, just before serving on it.

    SO_REUSEADDR (a restart must not wait for the old connections' TIME_WAIT) lets two sockets
    bind one port while neither listens, so another process that bound it meanwhile (during the
    start-up waits) and listens first is only seen here; uvloop would serve on this socket
    without a word and never be reached.
    """
    try:
        sock.listen()
    except OSError as exc:
        host, port = sock.getsockname()[:2]
        raise StartFailure(ExitCode.PORT, _cannot_listen(host, port, setting, exc)) from exc


def _cannot_listen(host: str, port: int, setting: str, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is in use: stop what holds it, or set {setting}"
    return f"cannot listen on {host}:{port} ({setting}): {exc.strerror or exc}"


#: Start-up waits: 0.5 s, 1 s, 2 s, … up to 10 s apart, within the start-up budget.
STARTUP_RETRIES = RetryPolicy(first=0.5, cap=10.0)


class NotReady(Exception):
    """A service that is not reachable yet (waiting may mend it)."""


async def wait_until(
    what: str,
    attempt: Callable[[], Awaitable[str | None]],
    budget: float,
    code: ExitCode,
    advice: str,
) -> None:
    """Call ``attempt`` (None: ready; a reason: not reachable yet) with backoff for ``budget`` seconds.

    ``attempt`` raises ``StartFailure`` itself for a permanent problem. One line per wait.
    """
    up_to = f"{budget:g} s"  # as the setting holds it: 3 s, 0.5 s

    async def ready() -> None:
        reason = await attempt()
        if reason is not None:
            raise NotReady(reason)

    def note(attempt_number: int, failure: BaseException, wait: float) -> None:
        log.warning(
            "%s is not reachable (%s); retrying in %.1f s (waiting up to %s)", what, failure, wait, up_to
        )

    try:  # the last attempt comes when the budget is spent, so "after" says the number "up to" did
        await replace(STARTUP_RETRIES, within=budget, fill_within=True).call(
            ready, retry_on=lambda failure: isinstance(failure, NotReady), on_retry=note
        )
    except NotReady as exc:
        waited = f"after {up_to}" if budget > 0 else "(startup_wait_seconds 0: tried once)"
        reason = str(exc).rstrip(". ")  # redis-py's own ends in "." (no ".." before the advice)
        raise StartFailure(code, f"{what} is not reachable {waited}: {reason}. {advice}") from None


async def wait_for_redis(url: str, budget: float, durability: bool = False) -> None:
    """Return once Redis at ``url`` answers PING with our credentials (and, with ``durability``,
    after one line when its persistence is weaker than delivery needs: ``check_durability``)."""
    from redis import exceptions as errors

    from clarigate.gateway.store.connection import open_redis

    where = f"store: Redis at {without_secrets(url)}"
    try:
        link = open_redis(url, retries=0)
    except Exception as exc:
        raise StartFailure(ExitCode.CONFIG, f"REDIS_URL cannot be used: {first_line(exc)}") from exc

    async def ping() -> str | None:
        try:
            await asyncio.wait_for(link.execute_command("PING"), 5)
        except (errors.AuthenticationError, errors.ResponseError) as exc:
            raise StartFailure(
                ExitCode.STORE_REFUSED,
                f"{where} refused us ({first_line(exc).rstrip('.?')}): "
                "put the right password (and database) in REDIS_URL",
            ) from exc
        except (OSError, TimeoutError, errors.ConnectionError, errors.TimeoutError) as exc:
            return first_line(exc)
        return None

    try:
        await wait_until(where, ping, budget, ExitCode.STORE_UNREACHABLE, "Is Redis running there?")
        if durability:
            await check_durability(link, where)
    finally:
        await link.aclose()


#: What each ``appendfsync`` leaves when Redis itself crashes (a clean restart loses nothing).
_FSYNC_LEAVES = {
    "always": None,
    "everysec": "a Redis crash can lose the last second of delivery marks",
    "no": "a Redis crash can lose the last ~30 s of delivery marks (the OS flushes when it likes)",
}
DELIVERY_DOC = 'deploy/README.md, "Redis settings delivery needs"'


async def check_durability(link: Any, where: str) -> None:
    """One line on Redis' persistence (``CONFIG GET appendonly appendfsync``): a WARNING when a
    restart can lose the marks of replies already sent (no AOF, or ``appendfsync no``), an INFO
    line for ``everysec``; one INFO line when ``CONFIG`` is not allowed (an ACL, managed Redis)."""
    from redis import exceptions as errors

    try:
        raw = await asyncio.wait_for(link.config_get("append*"), 5)
    except (errors.ResponseError, errors.NoPermissionError) as exc:
        log.info(
            "%s: its persistence settings cannot be read (%s): run it with appendonly yes and "
            "appendfsync everysec or always (%s)",
            where,
            first_line(exc),
            DELIVERY_DOC,
        )
        return
    settings = dict(zip(raw[::2], raw[1::2], strict=False)) if isinstance(raw, list) else dict(raw)
    value = lambda name: str(settings.get(name) or "")  # noqa: E731
    if value("appendonly") != "yes":
        log.warning(
            "%s keeps no append-only file (appendonly %s): a Redis restart loses the marks of "
            "replies already sent, and they are sent again (shown twice where the platform cannot "
            "tell: Telegram); set appendonly yes and appendfsync everysec or always (%s)",
            where,
            value("appendonly") or "unknown",
            DELIVERY_DOC,
        )
        return
    leaves = _FSYNC_LEAVES.get(value("appendfsync"), _FSYNC_LEAVES["no"])
    if leaves is not None:
        level = logging.INFO if value("appendfsync") == "everysec" else logging.WARNING
        log.log(
            level,
            "%s: appendfsync %s: %s (replies then looked for on Slack, absorbed by Feishu, shown "
            "twice on Telegram); appendfsync always loses none (%s)",
            where,
            value("appendfsync"),
            leaves,
            DELIVERY_DOC,
        )


#: PostgreSQL errors that waiting mends (the server is starting, the name not yet resolvable).
_PG_TRANSIENT = (
    "connection refused",
    "timeout expired",
    "could not translate host name",
    "the database system is starting up",
    "the database system is shutting down",
    "no route to host",
    "connection timed out",
)


async def wait_for_postgres(url: str, budget: float, create: bool = False) -> None:
    """Return once PostgreSQL at ``url`` accepts a connection; stop at once on a permanent refusal.

    ``create`` (the ``create_database`` setting): a database that does not exist is created,
    from the server's ``postgres`` database with the same credentials (which need CREATEDB).
    """
    import psycopg

    where = f"checkpointer: PostgreSQL at {without_secrets(url)}"

    async def connect() -> str | None:
        try:
            connection = await psycopg.AsyncConnection.connect(url, connect_timeout=5)
        except Exception as exc:
            text = first_line(exc)
            if any(marker in str(exc).lower() for marker in _PG_TRANSIENT):
                return text
            missing = "does not exist" in text and "database" in text
            if missing and create:
                await create_database(url, where)
                return await connect()
            if missing:
                advice = "create it, set create_database: true, or point CHECKPOINTER_URL elsewhere"
            else:
                advice = "check the user, password and database in CHECKPOINTER_URL"
            raise StartFailure(ExitCode.DATABASE, f"{where}: {text}; {advice}") from exc
        await connection.close()
        return None

    await wait_until(where, connect, budget, ExitCode.DATABASE, "Is PostgreSQL running there?")


async def create_database(url: str, where: str) -> None:
    """``CREATE DATABASE`` the database named in ``url``, connected to the server's ``postgres`` one."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = str(conninfo_to_dict(url).get("dbname") or "")
    try:
        admin = await psycopg.AsyncConnection.connect(
            make_conninfo(url, dbname="postgres"), connect_timeout=5, autocommit=True
        )
    except Exception as exc:
        raise StartFailure(
            ExitCode.DATABASE, f"{where}: cannot create database {name!r}: {first_line(exc)}"
        ) from exc
    try:
        await admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        log.info("checkpointer: created database %r (create_database is on)", name)
    except psycopg.errors.DuplicateDatabase:
        pass  # another replica created it a moment ago
    except Exception as exc:
        raise StartFailure(
            ExitCode.DATABASE,
            f"{where}: cannot create database {name!r}: {first_line(exc)} "
            "(the CHECKPOINTER_URL user needs CREATEDB, or create it beforehand)",
        ) from exc
    finally:
        await admin.close()
