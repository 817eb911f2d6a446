"""``clarigate serve``: the bot's HTTP server and workers under uvicorn, stopped gracefully.

Start-up fails the way ``doctor`` speaks: one line naming the setting and what to do, and an
exit code per failure class (``gateway.preflight.ExitCode``); the traceback only at
``--log-level debug``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
import socket
import threading
from collections.abc import Generator
from types import FrameType

import uvicorn

try:  # uvicorn's "standard" extra; plain asyncio without it
    import uvloop
except ImportError:  # pragma: no cover - installed with clarigate
    uvloop = None  # type: ignore[assignment]

from gateway.app import build_gateway, close_gateway, store_description
from gateway.config import CREDENTIAL_NAMES, GatewayConfig, startup_problems
from gateway.core import Gateway
from gateway.identity import IdentityClash, claim_identities, platform_identities
from gateway.logs import guard_handlers
from gateway.ops import OpsSampler
from gateway.preflight import (
    ExitCode,
    StartFailure,
    bind_port,
    first_line,
    wait_for_postgres,
    wait_for_redis,
)
from gateway.server import HttpMetrics, build_app, gateway_lifespan, metrics_route

log = logging.getLogger("gateway.serve")

#: SIGHUP (a closed terminal, some supervisors' "restart") drains like SIGTERM: no reload.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class GracefulServer(uvicorn.Server):
    """uvicorn, but SIGTERM/SIGINT/SIGHUP end in a clean exit (status 0) after the graceful shutdown.

    uvicorn re-raises a caught signal once it has shut down, which would make the process
    die "killed by SIGTERM"; an orchestrator should instead see a clean exit.
    """

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Handle ``STOP_SIGNALS`` while serving (uvicorn's own list lacks SIGHUP)."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {sig: signal.signal(sig, self.handle_exit) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First signal: shut down gracefully; a second SIGINT forces the exit."""
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            log.info("received %s: stopping", signal.Signals(sig).name)
            self.should_exit = True


def serve(config: GatewayConfig, host: str, port: int, *, debug: bool = False) -> int:
    """Run the bot until a stop signal; 0 after a clean shutdown, an ``ExitCode`` when it cannot start."""
    try:
        if uvloop is not None:
            log.info("event loop: uvloop")
            return uvloop.run(_serve(config, host, port))
        return asyncio.run(_serve(config, host, port))
    except StartFailure as failure:
        log.error("cannot start: %s", failure.message, exc_info=debug)
        return int(failure.code)
    except Exception as exc:
        hint = "" if debug else " (--log-level debug shows where)"
        log.error(
            "stopped by an unexpected error: %s: %s%s",
            type(exc).__name__,
            first_line(exc),
            hint,
            exc_info=debug,
        )
        return int(ExitCode.UNEXPECTED)


async def _serve(config: GatewayConfig, host: str, port: int) -> int:
    for warning in config.warnings:
        log.warning(warning)
    problems = startup_problems(config)
    if problems:
        raise StartFailure(ExitCode.CONFIG, "; ".join(problems))
    sock = bind_port(host, port)
    metrics_sock = bind_port(host, config.metrics_port) if config.metrics_port else None
    try:
        await _wait_for_stores(config)
        try:
            gateway = build_gateway(config)
        except ValueError as exc:  # an extra adapter that cannot be imported, …
            raise StartFailure(ExitCode.CONFIG, f"cannot build the bot: {exc}") from exc
        guard_handlers()  # the SDKs imported just now may have brought handlers of their own
        try:
            return await _run(gateway, config, sock, metrics_sock)
        finally:
            await close_gateway(gateway)
    finally:
        sock.close()
        if metrics_sock is not None:
            metrics_sock.close()


async def _wait_for_stores(config: GatewayConfig) -> None:
    """Redis, then the checkpointer's PostgreSQL: waited for while unreachable, refused at once if wrong."""
    budget = config.startup_wait_seconds
    if config.redis_url:
        await wait_for_redis(config.redis_url, budget)
    url = config.agent.checkpointer_url or ""
    if url.startswith(("postgresql://", "postgres://")):
        await wait_for_postgres(url, budget, create=config.create_database)


async def _run(
    gateway: Gateway, config: GatewayConfig, sock: socket.socket, metrics_sock: socket.socket | None
) -> int:
    enabled = [adapter.platform for adapter in gateway.adapters]
    log.info("store: %s", store_description(config))
    if enabled:
        log.info("platforms enabled: %s", ", ".join(enabled))
    else:
        log.warning(
            "no platform is enabled: only the health endpoints are served. To enable one, set %s. "
            "To try the agent right away, run `clarigate chat`.",
            "; or ".join(CREDENTIAL_NAMES.values()),
        )
    await _start(gateway, config)
    grace = config.shutdown_grace_seconds
    app = build_app(gateway, lifespan=gateway_lifespan(gateway, grace, start=False))
    host, port = sock.getsockname()[:2]
    server = GracefulServer(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,
            # one line per webhook is noise at any real rate: requests show in the metrics and
            # in each run's log lines instead
            access_log=False,
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(grace),
        )
    )
    sampler = OpsSampler(gateway, config.redis_url)
    sampler.start()
    metrics_server = _metrics_server(config, metrics_sock)
    metrics_task = (
        asyncio.create_task(metrics_server.serve(sockets=[metrics_sock]))
        if metrics_server is not None and metrics_sock is not None
        else None
    )
    try:
        await server.serve(sockets=[sock])
    finally:
        if metrics_server is not None and metrics_task is not None:
            metrics_server.should_exit = True
            await asyncio.gather(metrics_task, return_exceptions=True)
        await sampler.stop()
        if not server.started:
            await gateway.stop(0)
    if not server.started:
        raise StartFailure(ExitCode.PORT, f"the HTTP server did not start on {host}:{port}")
    log.info("stopped cleanly")
    return int(ExitCode.OK)


class _SecondServer(uvicorn.Server):
    """The metrics port's server: the main server owns the signals and stops this one."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Leave the signal handlers to the main server."""
        yield


def _metrics_server(config: GatewayConfig, sock: socket.socket | None) -> uvicorn.Server | None:
    """``/metrics`` alone, on ``metrics_port`` (None when metrics share the main port)."""
    if sock is None:
        return None
    from starlette.applications import Starlette

    app = HttpMetrics(Starlette(routes=[metrics_route(config.bot_id)]), ["/metrics"])
    host, port = sock.getsockname()[:2]
    return _SecondServer(uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="off"))


async def _start(gateway: Gateway, config: GatewayConfig) -> None:
    """The agent first (model, checkpointer), the bot's identity, then the platforms and the workers."""
    start_runner = getattr(gateway.runner, "start", None)
    if start_runner is not None:
        try:
            await start_runner()
        except Exception as exc:
            raise StartFailure(
                ExitCode.MODEL,
                f"the agent could not start: {first_line(exc)} (model {config.agent.model!r}: check "
                "LLM_MODEL, its provider package and API key, agent.tools and agent.mcp_servers; "
                "`clarigate doctor` says more)",
            ) from exc
    if config.redis_url:
        try:
            await claim_identities(config.redis_url, config.bot_id, await platform_identities(config))
        except IdentityClash as exc:
            raise StartFailure(ExitCode.IDENTITY, str(exc)) from exc
    try:
        await gateway.start()
    except Exception as exc:
        with contextlib.suppress(Exception):
            await gateway.stop(0)
        names = [adapter.platform for adapter in gateway.adapters]
        which = names[0] if len(names) == 1 else "a platform (" + ", ".join(names) + ")"
        raise StartFailure(ExitCode.PLATFORM, f"{which} could not start: {first_line(exc)}") from exc
