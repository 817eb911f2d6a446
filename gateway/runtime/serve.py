"""``clarigate serve``: the bot's HTTP server and workers under uvicorn, stopped gracefully.

Start-up fails the way ``doctor`` speaks: one line naming the setting and what to do, and an
exit code per failure class (``clarigate.gateway.runtime.preflight.ExitCode``); the traceback only at
``--log-level debug``. A stop signal ends it with status 0 whenever it comes, during the start
too (``clarigate.gateway.runtime.stopping``).

What runs where is the ``role`` setting (or ``--role``): ``all`` one process does everything;
``web`` the HTTP side only (webhooks, receivers, health, metrics: messages are enqueued in
Redis), ``worker`` the agent runs and their deliveries only (health and metrics on the port);
``auto`` (the default) is ``all`` without Redis and, with Redis, a web process that starts,
watches and stops a worker process of its own (``clarigate.gateway.runtime.processes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import socket
from collections.abc import Coroutine, Sequence
from typing import Any

import uvicorn
from starlette.types import ASGIApp

try:  # uvicorn's "standard" extra; plain asyncio without it
    import uvloop
except ImportError:  # pragma: no cover - installed with clarigate
    uvloop = None  # type: ignore[assignment]

from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.app import build_gateway, close_gateway, store_line
from clarigate.gateway.runtime.config import TRY_CHAT, GatewayConfig, credential_hints, startup_problems
from clarigate.gateway.runtime.graceful import GracefulServer
from clarigate.gateway.runtime.identity import IdentityClash, claim_identities, platform_identities
from clarigate.gateway.runtime.logs import access_logged, guard_handlers
from clarigate.gateway.runtime.ops import OpsSampler
from clarigate.gateway.runtime.postgres_preflight import wait_for_postgres
from clarigate.gateway.runtime.preflight import (
    METRICS_PORT_SETTING,
    ExitCode,
    StartFailure,
    agent_start_failure,
    bind_ports,
    first_line,
    start_listening,
    wait_for_redis,
)
from clarigate.gateway.runtime.processes import WorkerExited, WorkerGroup, exit_with_parent
from clarigate.gateway.runtime.stopping import installed_stops, stop_signals
from clarigate.gateway.runtime.supervise import keep_running, planned_worker_processes
from clarigate.gateway.web.server import build_app, gateway_lifespan, metrics_server_on

log = logging.getLogger("clarigate.gateway.runtime.serve")

#: Where each role's process runs what (``split``: ``auto`` with Redis, a web and a worker process).
ROLES = ("auto", "all", "web", "worker")


def effective_role(config: GatewayConfig) -> str:
    """``config.role`` with ``auto`` resolved: ``split`` with Redis, ``all`` without."""
    if config.role == "auto":
        return "split" if config.redis_url else "all"
    return config.role


def serve(
    config: GatewayConfig,
    host: str,
    port: int,
    *,
    debug: bool = False,
    worker_args: Sequence[str] = (),
    supervised_by: str | None = None,
) -> int:
    """Run the bot until a stop signal; 0 after a clean shutdown, an ``ExitCode`` when it cannot start.

    ``worker_args``: the command-line options a worker process this one starts is given too
    (``--config``, logging); ``supervised_by``: in such a worker process, the file descriptors
    of its health socket and of the pipe that tells it the web process is gone.
    """
    with stop_signals() as stops:  # from the first moment: a stop during the start ends it
        try:
            return _run_loop(_serve(config, host, port, list(worker_args), supervised_by))
        except asyncio.CancelledError:
            if stops.received is None:
                raise
            log.info("stopped cleanly")
            return int(ExitCode.OK)
        except StartFailure as failure:
            log.error("cannot start: %s", failure.message, exc_info=debug)
            return int(failure.code)
        except WorkerExited as exited:  # its own log said why; its status says the class
            return exited.code if exited.code > 0 else int(ExitCode.UNEXPECTED)
        except Exception as exc:
            _unexpected(exc, debug)
            return int(ExitCode.UNEXPECTED)


def _run_loop(main: Coroutine[Any, Any, int]) -> int:
    if uvloop is not None:
        log.info("event loop: uvloop")
        return uvloop.run(main)
    return asyncio.run(main)


def _unexpected(exc: Exception, debug: bool) -> None:
    hint = "" if debug else " (--log-level debug shows where)"
    log.error(
        "stopped by an unexpected error: %s: %s%s", type(exc).__name__, first_line(exc), hint, exc_info=debug
    )


async def _serve(
    config: GatewayConfig, host: str, port: int, worker_args: list[str], supervised_by: str | None
) -> int:
    stops = installed_stops()
    stops.starting()  # a stop signal from now on ends the start
    role = effective_role(config)
    if supervised_by is None:  # a worker process started by a web process: said there already
        for warning in config.warnings:
            log.warning(warning)
    problems = startup_problems(config)
    if problems:
        raise StartFailure(ExitCode.CONFIG, "; ".join(problems))
    if supervised_by is not None:
        listen_fd, parent_fd = (int(fd) for fd in supervised_by.split(","))
        exit_with_parent(parent_fd)
        sock = socket.socket(fileno=listen_fd)
        metrics_sock = None  # the web process serves the replica's metrics
    else:
        sock, metrics_sock = bind_ports(host, port, config.metrics_port)
    worker: WorkerGroup | None = None
    try:
        await _wait_for_stores(config, durability=supervised_by is None)
        if role == "split":
            await _claim_identity(config)  # refused here, nothing is started (the workers check again)
            worker = WorkerGroup(worker_args, planned_worker_processes(config), config.workers)
            stops.forward = worker.forward  # a stop signal from now on reaches them too
            worker.start()  # it starts (imports, the agent, the platforms) while this one does
        try:
            gateway = build_gateway(config)
        except ValueError as exc:  # an extra adapter that cannot be imported, …
            raise StartFailure(ExitCode.CONFIG, f"cannot build the bot: {exc}") from exc
        guard_handlers()  # the SDKs imported just now may have brought handlers of their own
        try:
            return await _run(gateway, config, sock, metrics_sock, role, worker, supervised_by is not None)
        finally:
            await close_gateway(gateway)
    finally:
        if worker is not None:  # after a failed start, nothing to finish; on a stop, the runs
            # its worker processes took meanwhile (other replicas' queued jobs) get their grace
            await worker.stop(config.shutdown_grace_seconds if stops.received else 0)
        sock.close()
        if metrics_sock is not None:
            metrics_sock.close()


async def _wait_for_stores(config: GatewayConfig, durability: bool = True) -> None:
    """Redis, then the checkpointer's PostgreSQL: waited for while unreachable, refused at once if
    wrong; Redis' persistence said in one line where it is weaker than delivery needs
    (``durability``: the process that starts the replica, not each worker process)."""
    budget = config.startup_wait_seconds
    if config.redis_url:
        await wait_for_redis(config.redis_url, budget, durability)
    url = config.agent.checkpointer_url or ""
    if url.startswith(("postgresql://", "postgres://")):
        await wait_for_postgres(url, budget, create=config.create_database)


async def _run(
    gateway: Gateway,
    config: GatewayConfig,
    sock: socket.socket,
    metrics_sock: socket.socket | None,
    role: str,
    worker: WorkerGroup | None,
    supervised: bool,
) -> int:
    if role == "worker":
        from clarigate.gateway.runners.usage import count_inline

        count_inline()  # no acks wait on this event loop (gateway.llm_usage)
    if not supervised:
        _announce(gateway, config, role, worker, (sock, metrics_sock))
    jobs = role in ("all", "worker")
    try:
        await _start(gateway, config, jobs=jobs, receive=role != "worker", claim=role != "split")
    except asyncio.CancelledError:  # a stop signal while starting: what started stops
        with contextlib.suppress(Exception):
            await gateway.stop(0)
        raise
    grace = config.shutdown_grace_seconds
    app = build_app(
        gateway,
        lifespan=gateway_lifespan(gateway, grace, start=False),
        webhooks=role != "worker",
        metrics_here=True if supervised else None,
        worker=worker,
    )
    server = _http_server(app, sock, grace)
    exited = await _serve_until_stopped(gateway, config, server, sock, metrics_sock, worker)
    if not server.started:
        host, port = sock.getsockname()[:2]
        raise StartFailure(ExitCode.PORT, f"the HTTP server did not start on {host}:{port}")
    if exited:
        raise WorkerExited(exited[0])
    if worker is not None:
        code = await worker.stop(grace)
        if code != 0:
            log.error("a worker process stopped with status %s", code)
            return int(ExitCode.UNEXPECTED)
    log.info("stopped cleanly")
    return int(ExitCode.OK)


def _announce(
    gateway: Gateway,
    config: GatewayConfig,
    role: str,
    worker: WorkerGroup | None,
    socks: tuple[socket.socket, socket.socket | None],
) -> None:
    """The start-up lines: where it listens, where the state is, what runs in which process,
    which platforms."""
    enabled = [adapter.platform for adapter in gateway.adapters]
    sock, metrics_sock = socks
    metrics = f"; /metrics on {_url(metrics_sock)}" if metrics_sock is not None else ", /metrics"
    log.info("HTTP on %s (/healthz, /readyz%s)", _url(sock), metrics)
    log.log(*store_line(config))
    if role == "split" and worker is not None:
        count = len(worker.processes)
        log.info(
            "role: web process (HTTP, platforms) and %d worker process%s (agent runs, %d at once in all)",
            count,
            "" if count == 1 else "es",
            config.workers,
        )
    elif role != "all":
        log.info("role: %s", _ROLE_LINES[role])
    if enabled:
        log.info("platforms enabled: %s", ", ".join(enabled))
    else:
        log.warning(
            "no platform is enabled: only the health endpoints are served. To enable one, set %s. "
            "To try the agent right away, run %s.",
            credential_hints(config),
            TRY_CHAT,
        )


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def _http_server(app: ASGIApp, sock: socket.socket, grace: float) -> GracefulServer:
    """uvicorn on the bound socket, given ``grace`` seconds to finish its requests on a stop."""
    host, port = sock.getsockname()[:2]
    return GracefulServer(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,
            access_log=access_logged(),
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(grace),
        )
    )


async def _serve_until_stopped(
    gateway: Gateway,
    config: GatewayConfig,
    server: GracefulServer,
    sock: socket.socket,
    metrics_sock: socket.socket | None,
    worker: WorkerGroup | None,
) -> list[int]:
    """Serve (and the metrics port, the ops sampler) until a stop signal or the worker's exit.

    Returns the worker process's exit status when it exited on its own (empty otherwise).
    """
    installed_stops().started()  # a stop signal from now on stops the server once it serves
    exited: list[int] = []
    budget = max(120.0, config.startup_wait_seconds + 60)
    watching = _watch_worker(server, worker, exited, budget) if worker is not None else None
    sampler = OpsSampler(gateway, config.redis_url)
    metrics_server = metrics_server_on(config.bot_id, metrics_sock)
    metrics_task = None
    try:
        start_listening(sock)  # another process on the port since it was bound is said here
        if metrics_server is not None and metrics_sock is not None:
            start_listening(metrics_sock, METRICS_PORT_SETTING)
            metrics_task = asyncio.create_task(metrics_server.serve(sockets=[metrics_sock]))
        sampler.start()
        await server.serve(sockets=[sock])
    finally:
        if metrics_server is not None and metrics_task is not None:
            metrics_server.should_exit = True
            await asyncio.gather(metrics_task, return_exceptions=True)
        await sampler.stop()
        if not server.started:
            await gateway.stop(0)
        if watching is not None:
            watching.cancel()
            await asyncio.gather(watching, return_exceptions=True)
    return exited


def _watch_worker(
    server: GracefulServer, worker: WorkerGroup, exited: list[int], budget: float
) -> asyncio.Task[None]:
    """Stop the server when the worker processes do not start within ``budget`` seconds, or
    die too often once started (a dead one is restarted: ``supervise``; the status goes into
    ``exited``). The port is not held for their start: webhooks are queued meanwhile
    (``/readyz`` says they are starting)."""

    async def stop_with_worker() -> None:
        try:
            await worker.wait_started(budget)  # the others are started once the first answers
        except (TimeoutError, WorkerExited) as exc:  # one that exits says why itself
            if worker.stopping:
                return  # stopped while starting: a clean stop
            if isinstance(exc, TimeoutError):
                log.error("%s: stopping", exc)
            exited.append(exc.code if isinstance(exc, WorkerExited) else int(ExitCode.UNEXPECTED))
            server.should_exit = True
            return
        code = await keep_running(worker)
        if not worker.stopping:
            exited.append(code)
            log.error("the worker process exited with status %d: stopping", code)
            server.should_exit = True

    return asyncio.create_task(stop_with_worker(), name="watch-worker")


_ROLE_LINES = {
    "web": "web only (HTTP, platforms): agent runs are left to worker processes on the same Redis",
    "worker": "worker only (agent runs): messages come in through web processes on the same Redis",
}


async def _start(
    gateway: Gateway, config: GatewayConfig, *, jobs: bool = True, receive: bool = True, claim: bool = True
) -> None:
    """The agent first (model, checkpointer), the bot's identity, then the platforms and the workers.

    ``jobs=False`` (a web process): no agent and no workers, only the platforms; ``receive=False``
    (a worker process): the platforms' clients without their receivers; ``claim=False``: the
    identity was checked already (by a web process, before it started its worker).
    """
    if jobs:
        try:
            await gateway.runner.start()
        except Exception as exc:
            raise agent_start_failure(
                exc, config.agent.model, config.agent.server_url, config.data_dir, config.agent.graph
            ) from exc
    if claim:
        await _claim_identity(config)
    try:
        await gateway.start(jobs=jobs, receive=receive)
    except Exception as exc:
        with contextlib.suppress(Exception):
            await gateway.stop(0)
        names = [adapter.platform for adapter in gateway.adapters]
        which = names[0] if len(names) == 1 else "a platform (" + ", ".join(names) + ")"
        raise StartFailure(ExitCode.PLATFORM, f"{which} could not start: {first_line(exc)}") from exc


async def _claim_identity(config: GatewayConfig) -> None:
    """Record this bot's platform identities under its bot id, or refuse another's (exit 9)."""
    if config.redis_url:
        try:
            await claim_identities(config.redis_url, config.bot_id, await platform_identities(config))
        except IdentityClash as exc:
            raise StartFailure(ExitCode.IDENTITY, str(exc)) from exc
