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
from urllib.parse import urlsplit

from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.runtime.environment import ENV_NAMES
from clarigate.gateway.runtime.invalid import set_by
from clarigate.gateway.runtime.redaction import without_secrets

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
    exc: BaseException,
    model: str,
    server_url: str | None = None,
    data_dir: str | None = None,
    graph: str | None = None,
) -> StartFailure:
    """Why the agent did not start: a setting that does not apply where it runs, its files in
    ``data_dir`` or the SQLite file of CHECKPOINTER_URL that cannot be made (configuration problems,
    named), the LangGraph server at ``server_url`` (its own words name the setting to check), the
    operator's own ``graph`` (``agent.graph``: a configuration problem, named), or the in-process
    agent's model, tools or MCP servers."""
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
    if graph:  # the operator's own graph: no model, tools or MCP servers of ours to check
        return graph_failure(exc, graph)
    return StartFailure(
        ExitCode.MODEL,
        f"the agent could not start: {first_line(exc)} (model {model!r}: {model_advice()}; "
        "`clarigate doctor` says more)",
    )


#: What to check when the module of ``agent.graph`` (or one it imports) cannot be imported.
GRAPH_IMPORT_ADVICE = (
    "the module and what it imports must be importable where clarigate runs: "
    "install its package or add its folder to PYTHONPATH"
)
#: What to check when the module of ``agent.graph`` was imported but gave no usable graph.
GRAPH_ADVICE = "check the name after ':', a compiled graph or a factory that returns one"


def graph_failure(exc: BaseException, graph: str) -> StartFailure:
    """The operator's graph ``graph`` (``agent.graph``) could not be loaded: a configuration
    failure naming it, what went wrong (the import error itself when its module could not be
    imported; what its factory raised, secrets masked) and what to check."""
    from clarigate.gateway.runtime.redaction import redact

    named = f"agent.graph {graph!r}"
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ImportError):
        cause = cause.__cause__ or cause.__context__
    if cause is not None:
        why = f"{type(cause).__name__}: {first_line(cause)}"
        said = f"{named} could not be loaded: {why} ({GRAPH_IMPORT_ADVICE})"
    elif first_line(exc).startswith(named):  # the loader's own words: no graph under that name
        said = f"{first_line(exc)} ({GRAPH_ADVICE})"
    else:  # the factory (or the module) raised it
        said = f"{named} could not be loaded: {type(exc).__name__}: {first_line(exc)}"
    return StartFailure(ExitCode.CONFIG, redact(said))


def model_advice(section: str = "agent") -> str:
    """What to check when the built-in agent of ``section`` (``agent``, ``routes.<name>.agent``)
    does not start: its model where it was set (a variable such as LLM_MODEL, else the YAML key)."""
    model = set_by([*section.split("."), "model"], ENV_NAMES) or f"{section}.model"
    return f"check {model}, its provider package and API key, {section}.tools and {section}.mcp_servers"


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


def port_problem(port: int, variable: bool = False) -> str | None:
    """Why ``serve`` cannot listen on ``port`` whatever the host (``doctor`` asks too), or None;
    0 (any free port) is taken from ``--port`` only (a test, a local run), not from $PORT (``variable``)."""
    in_range = (1 if variable else 0) <= port <= 65535
    return None if in_range else f"--port / PORT {port} is out of range: use 1-65535"


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
        raise StartFailure(code, not_reachable(what, str(exc), advice, waited)) from None


def not_reachable(what: str, reason: str, advice: str, waited: str = "") -> str:
    """``<what> is not reachable [<waited>]: <reason>. <advice>``: serve's last line after its
    wait, and doctor's."""
    reason = reason.rstrip(". ")  # redis-py's own ends in "." (no ".." before the advice)
    return f"{what} is not reachable{' ' + waited if waited else ''}: {reason}. {advice}"


def redis_advice(url: str) -> str:
    """What to look at when Redis at ``url`` is not reachable: the Sentinels, for a Sentinel URL."""
    from clarigate.gateway.store.connection import SENTINEL_SCHEMES

    if urlsplit(url).scheme.lower() in SENTINEL_SCHEMES:
        return "Are the Sentinels running there, and do they monitor the master the URL names?"
    return "Is Redis running there?"


async def ping_redis(link: Any, where: str) -> str | None:
    """One ``PING`` with our credentials: None when Redis answers, why not when it cannot be
    reached (waiting may mend that); ``StartFailure`` (exit 4) when it answered but refused us
    (password, ACL, database index), which waiting cannot mend."""
    from redis import exceptions as errors

    from clarigate.gateway.store.connection import SentinelsRefused, why_not_reached

    try:
        await asyncio.wait_for(link.execute_command("PING"), 5)
    except (errors.AuthenticationError, errors.ResponseError) as exc:
        fix = "the Sentinels' password in REDIS_URL (?sentinel_password=…)"
        fix = fix if isinstance(exc, SentinelsRefused) else "the right password (and database) in REDIS_URL"
        raise StartFailure(
            ExitCode.STORE_REFUSED, f"{where} refused us ({first_line(exc).rstrip('.?')}): put {fix}"
        ) from exc
    except (OSError, TimeoutError, errors.ConnectionError, errors.TimeoutError) as exc:
        return (
            "no answer within 5 s" if isinstance(exc, TimeoutError) and not str(exc) else why_not_reached(exc)
        )
    return None


async def wait_for_redis(url: str, budget: float, durability: bool = False) -> None:
    """Return once Redis at ``url`` answers PING with our credentials (and, with ``durability``,
    after one line when its persistence is weaker than delivery needs: ``check_durability``)."""
    from clarigate.gateway.runtime.durability import check_durability
    from clarigate.gateway.store.connection import open_redis

    where = f"store: Redis at {without_secrets(url)}"
    try:
        link = open_redis(url, retries=0)
    except Exception as exc:
        raise StartFailure(ExitCode.CONFIG, f"REDIS_URL cannot be used: {first_line(exc)}") from exc
    try:
        await wait_until(
            where, lambda: ping_redis(link, where), budget, ExitCode.STORE_UNREACHABLE, redis_advice(url)
        )
        if durability:
            await check_durability(link, where)
    finally:
        await link.aclose()
