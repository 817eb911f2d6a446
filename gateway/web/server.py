"""The HTTP server: the adapters' webhooks, health, readiness and metrics, guarded against bad input.

Bad input gets a 4xx and one WARNING line, never a traceback: a body over the limit gets 413,
a body not received whole within ``body_timeout_seconds`` (trickled, or cut off before its
declared length) gets 408, and a request an adapter cannot use (malformed JSON, a missing or
wrong-typed field, a signed payload of the wrong shape) raises ``BadRequest`` and gets its
4xx. The store (Redis) unreachable while a request is handled is an outage: 503 with
``Retry-After`` and one WARNING line per outage (``web.unavailable``); a request's store calls
wait out a short blip within ``ACK_STORE_BUDGET_SECONDS`` first. Anything else an endpoint
raises is a bug, not the platform's mistake: 500 (so the platform redelivers), the traceback
logged at ERROR and ``clarigate_http_errors_total`` counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Generator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import uvicorn
from prometheus_client import CONTENT_TYPE_LATEST
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from clarigate.gateway.boundary.errors import BadRequest
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime import metrics
from clarigate.gateway.runtime.app import freeze_startup_objects
from clarigate.gateway.runtime.logs import access_logged
from clarigate.gateway.runtime.ops import exposition, liveness_problems
from clarigate.gateway.runtime.processes import WorkerGroup
from clarigate.gateway.runtime.repeated import RepeatedWarning
from clarigate.gateway.web.readiness import readyz
from clarigate.gateway.web.unavailable import Ping, answer_unavailable, webhook_outage, within_ack

log = logging.getLogger(__name__)

TOO_LARGE = "request body too large"
#: The 413 of a declared over-long body is said at most once per this many seconds.
REFUSED_LINE_EVERY = 60.0


class BodyLimit:
    """ASGI middleware: bodies over ``max_bytes`` get 413, judged before the body is read whole.

    A declared ``Content-Length`` over the limit is refused at once, said at most once a minute
    (``RepeatedWarning``: anyone can send such requests by the thousand, and nothing is read);
    otherwise the bytes are counted as they stream in and the request is cut off as soon as the
    count passes the limit (its line is ``InputGuard``'s, for the ``BodyTooLarge`` raised inside).
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.said = RepeatedWarning(log, REFUSED_LINE_EVERY)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request through, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            line = ("bad request to %s (413): %s", scope.get("path", ""), TOO_LARGE)
            if not self.said.warning(*line):
                log.debug(*line)
            await _too_large(send)
            return
        seen = 0
        exceeded = False
        started = False

        async def counting_receive() -> Message:
            nonlocal seen, exceeded
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    exceeded = True
                    raise BodyTooLarge()
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if exceeded:
                return  # the app's own error answer is replaced by the 413 below
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counting_receive, guarded_send)
        except Exception:
            if not exceeded:
                raise
        if exceeded and not started:
            await _too_large(send)


class BodyTooLarge(BadRequest):
    """Raised inside the app when the streamed body passes the limit."""

    def __init__(self) -> None:
        super().__init__(TOO_LARGE, status=413)


async def _too_large(send: Send) -> None:
    await _error(send, 413, TOO_LARGE)


async def _error(send: Send, status: int, text: str) -> None:
    body = json.dumps({"error": text}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class BodyTimeout(BadRequest):
    """Raised inside the app when the request body did not arrive whole in time."""

    def __init__(self) -> None:
        super().__init__("request body not received in time", status=408)


class InputGuard:
    """ASGI middleware inside the app (it sees an endpoint's exception before any answer is sent).

    Answers 408 when the body is not received whole within ``body_timeout`` seconds, the 4xx
    of a ``BadRequest`` an endpoint raised (one WARNING line), 503 when the store could not be
    reached within ``ACK_STORE_BUDGET_SECONDS`` of the request's start (``StoreOutage``: one line
    per outage, ``store_ping`` tells it is over), 500 for anything
    else (ERROR with the traceback); counted by route (``paths``; anything else is ``other``).
    """

    def __init__(
        self, app: ASGIApp, body_timeout: float, paths: Collection[str] = (), store_ping: Ping | None = None
    ) -> None:
        self.app = app
        self.body_timeout = body_timeout
        self.paths = set(paths)
        self.outage = webhook_outage(store_ping)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request through, or answer 4xx / 503 / 500."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.body_timeout
        body_done = False
        started = False

        async def timed_receive() -> Message:
            nonlocal body_done
            if body_done:  # waiting for a disconnect after the body: no deadline
                return await receive()
            try:
                async with asyncio.timeout_at(deadline):
                    message = await receive()
            except TimeoutError:
                raise BodyTimeout() from None
            body_done = message["type"] != "http.request" or not message.get("more_body", False)
            return message

        async def tracked_send(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        path = str(scope.get("path", ""))
        try:
            with within_ack():  # a store blip is waited out, a longer outage answered in time
                await self.app(scope, timed_receive, tracked_send)
        except BadRequest as exc:
            if started:
                raise
            # the reason is our own words (BadRequest never quotes the request)
            log.warning("bad request to %s (%d): %s", path, exc.status, exc.reason)
            await _error(send, exc.status, exc.reason)
        except ClientDisconnect:  # nobody left to answer, and nothing went wrong here
            log.info("request to %s: the client went away before its body was read", path)
        except Exception as exc:
            await self._failed(exc, path, send, answered=started)
        else:
            await self.outage.answered()

    async def _failed(self, exc: Exception, path: str, send: Send, answered: bool) -> None:
        """The store unreachable is an outage (503, the platform redelivers); anything else a bug
        (500, the traceback). An answer already begun is cut off: the server closes the connection."""
        route = path if path in self.paths else "other"
        if self.outage.met(f"request to {path} answered 503", exc):
            metrics.http_unavailable(route).inc()
            if not answered:
                await answer_unavailable(send)
            return
        metrics.http_errors(route).inc()
        log.error("request to %s failed", path, exc_info=exc)
        if not answered:
            await _error(send, 500, "internal error")


def build_app(
    gateway: Gateway,
    *,
    max_body_bytes: int | None = None,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[Any]] | None = None,
    webhooks: bool = True,
    metrics_here: bool | None = None,
    worker: WorkerGroup | None = None,
) -> ASGIApp:
    """The ASGI app: every registered adapter's routes, ``/healthz``, ``/readyz``, ``/metrics``.

    ``/healthz`` fails (503) when a worker loop died or a receiver (Socket Mode, long connection,
    poller) is down; ``/metrics`` moves to its own port when ``metrics_port`` is set
    (``metrics_here`` decides otherwise). ``webhooks=False``: no adapter routes (a worker
    process). With ``worker`` (the web process of ``serve``'s two), health and readiness are
    the whole replica's: the worker processes' own are asked and added in (metrics are the
    replica's through the directory they share, see ``exposition``).
    """
    routes: list[BaseRoute] = [
        Route("/healthz", _healthz(gateway, worker), methods=["GET"]),
        Route("/readyz", readyz(gateway, worker), methods=["GET"]),
    ]
    if metrics_here is None:
        metrics_here = gateway.config.metrics_port is None  # else served on its own port
    if metrics_here:
        routes.append(metrics_route(gateway.config.bot_id))
    if webhooks:
        for adapter in gateway.adapters:
            routes.extend(adapter.routes())
    paths = [r.path for r in routes if isinstance(r, Route)]
    timeout = gateway.config.body_timeout_seconds
    guard = Middleware(InputGuard, body_timeout=timeout, paths=paths, store_ping=gateway.store.ping)
    app = Starlette(routes=routes, lifespan=lifespan, middleware=[guard])
    limit = max_body_bytes if max_body_bytes is not None else gateway.config.max_body_bytes
    return HttpMetrics(BodyLimit(app, limit), paths)


def _healthz(gateway: Gateway, worker: WorkerGroup | None) -> Callable[[Request], Awaitable[Response]]:
    """``GET /healthz``: 503 naming what failed, with ``worker`` the worker processes' too."""

    async def healthz(request: Request) -> Response:
        problems = await liveness_problems(gateway)
        if worker is not None:
            problems.update(await worker.health_problems())
        if problems:  # a dead worker loop or receiver: restarting the replica mends it
            return JSONResponse({"status": "unhealthy", "failed": problems}, status_code=503)
        return JSONResponse({"status": "ok"})

    return healthz


def metrics_route(bot_id: str) -> Route:
    """``GET /metrics``: every series, labelled with the bot id (the whole replica's under
    ``serve``: its worker processes count into the same directory, see ``exposition``)."""

    async def serve_metrics(request: Request) -> Response:
        return Response(exposition(bot_id), media_type=CONTENT_TYPE_LATEST)

    return Route("/metrics", serve_metrics, methods=["GET"])


class HttpMetrics:
    """ASGI middleware: responses by route and status, and the time to the response's first byte
    (for a webhook, the ack latency the platform sees). Unknown paths count as ``other``."""

    def __init__(self, app: ASGIApp, paths: list[str]) -> None:
        self.app = app
        self.paths = set(paths)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request through, measuring it."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        route = scope.get("path", "") if scope.get("path", "") in self.paths else "other"
        started = time.perf_counter()

        async def measured_send(message: Message) -> None:
            if message["type"] == "http.response.start":
                metrics.HTTP_LATENCY.labels(route=route).observe(time.perf_counter() - started)
                metrics.HTTP_RESPONSES.labels(route=route, status=str(message["status"])).inc()
            await send(message)

        await self.app(scope, receive, measured_send)


def gateway_lifespan(
    gateway: Gateway, grace: float, *, start: bool = True
) -> Callable[[Starlette], AbstractAsyncContextManager[None]]:
    """Start the gateway with the server (unless started already, ``start=False``); on shutdown
    (SIGTERM) stop it within ``grace`` seconds."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        if start:
            await gateway.start()
        freeze_startup_objects()
        try:
            yield
        finally:
            log.info("shutting down: finishing running jobs within %.0f s", grace)
            await gateway.stop(grace)

    return lifespan


class _SecondServer(uvicorn.Server):
    """The metrics port's server: the main server owns the signals and stops this one."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        """Leave the signal handlers to the main server."""
        yield


def metrics_server_on(bot_id: str, sock: socket.socket | None) -> uvicorn.Server | None:
    """``/metrics`` alone, on ``metrics_port`` (None when metrics share the main port)."""
    if sock is None:
        return None
    app = HttpMetrics(Starlette(routes=[metrics_route(bot_id)]), ["/metrics"])
    host, port = sock.getsockname()[:2]
    config = uvicorn.Config(app, host=host, port=port, log_config=None, lifespan="off")
    config.access_log = access_logged()  # a scrape's access line at debug only, as on the HTTP port
    return _SecondServer(config)
