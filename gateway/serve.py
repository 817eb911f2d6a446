"""``clarigate serve``: the bot's HTTP server and workers under uvicorn, stopped gracefully."""

from __future__ import annotations

import asyncio
import logging
import math
import signal
from types import FrameType

import uvicorn

from gateway.app import build_gateway, close_gateway, store_description
from gateway.config import GatewayConfig
from gateway.doctor import CREDENTIAL_NAMES
from gateway.logs import guard_handlers
from gateway.server import build_app, gateway_lifespan

log = logging.getLogger("gateway.serve")


class GracefulServer(uvicorn.Server):
    """uvicorn, but SIGTERM/SIGINT end in a clean exit (status 0) after the graceful shutdown.

    uvicorn re-raises a caught signal once it has shut down, which would make the process
    die "killed by SIGTERM"; an orchestrator should instead see a clean exit.
    """

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        """First signal: shut down gracefully; a second SIGINT forces the exit."""
        if self.should_exit and sig == signal.SIGINT:
            self.force_exit = True
        else:
            log.info("received %s: stopping", signal.Signals(sig).name)
            self.should_exit = True


def serve(config: GatewayConfig, host: str, port: int) -> int:
    """Run the bot until SIGTERM; 0 after a clean shutdown, 1 when it could not start."""
    for warning in config.warnings:
        log.warning(warning)
    try:
        gateway = build_gateway(config)
    except ValueError as exc:  # an extra adapter that cannot be imported, …
        log.error("cannot build the bot: %s", exc)
        return 2
    guard_handlers()  # the SDKs imported just now may have brought handlers of their own
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
    grace = config.shutdown_grace_seconds
    app = build_app(gateway, lifespan=gateway_lifespan(gateway, grace))
    server = GracefulServer(
        uvicorn.Config(
            app,
            host=host,
            port=port,
            log_config=None,
            lifespan="on",
            timeout_graceful_shutdown=math.ceil(grace),
        )
    )

    async def run() -> None:
        try:
            await server.serve()
        finally:
            await close_gateway(gateway)

    asyncio.run(run())
    if not server.started:
        log.error("the server did not start (see the errors above)")
        return 1
    log.info("stopped cleanly")
    return 0
