"""The HTTP server: the adapters' webhooks, health, readiness and metrics, with a body limit."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.app import freeze_startup_objects
from gateway.core import Gateway

log = logging.getLogger(__name__)

#: How long ``/readyz`` waits for each dependency before calling it down.
READY_TIMEOUT = 2.0


class BodyLimit:
    """ASGI middleware: bodies over ``max_bytes`` get 413, judged before the body is read whole.

    A declared ``Content-Length`` over the limit is refused at once; otherwise the bytes are
    counted as they stream in and the request is cut off as soon as the count passes the limit.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request through, or answer 413."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
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


class BodyTooLarge(Exception):
    """Raised inside the app when the streamed body passes the limit."""


async def _too_large(send: Send) -> None:
    body = b'{"error":"request body too large"}'
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 413, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def build_app(
    gateway: Gateway,
    *,
    max_body_bytes: int | None = None,
    lifespan: Callable[[Starlette], AbstractAsyncContextManager[Any]] | None = None,
) -> ASGIApp:
    """The ASGI app: every registered adapter's routes, ``/healthz``, ``/readyz``, ``/metrics``."""

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def readyz(request: Request) -> Response:
        problems = {}
        checks = (("store", gateway.store.ping), ("checkpointer", gateway.runner.ping))
        results = await asyncio.gather(*(_answers(check) for _, check in checks))
        for (name, _), ok in zip(checks, results, strict=True):
            if not ok:
                problems[name] = "unreachable"
        if problems:
            return JSONResponse({"status": "unavailable", "failed": problems}, status_code=503)
        return JSONResponse({"status": "ready"})

    async def metrics(request: Request) -> Response:
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)

    routes: list[BaseRoute] = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
        Route("/metrics", metrics, methods=["GET"]),
    ]
    for adapter in gateway.adapters:
        routes.extend(adapter.routes())
    app = Starlette(routes=routes, lifespan=lifespan)
    limit = max_body_bytes if max_body_bytes is not None else gateway.config.max_body_bytes
    return BodyLimit(app, limit)


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


async def _answers(check: Callable[[], Any]) -> bool:
    """True when ``check()`` returns truthy within ``READY_TIMEOUT`` without raising."""
    try:
        return bool(await asyncio.wait_for(check(), READY_TIMEOUT))
    except Exception:
        log.warning("readiness check failed", exc_info=True)
        return False
