"""A fake chat platform that fails on command, and the adapter that talks to it over HTTP.

``FakePlatform`` runs in the test process (aiohttp on a free port). It records every send that
arrives (``arrivals``) and shows each one once per delivery id (``shown``), as Feishu does with
its ``uuid``: a send repeated after a crash is not shown twice. The test can make it answer
503 with ``Retry-After`` for a while, add latency, or hold one process's next send unanswered
(to kill that process while the send is in flight).

``HttpPlatformAdapter`` is plugged into ``clarigate serve`` through ``extra_adapters``: it takes
messages on ``POST /test/say`` and sends replies to ``PLATFORM_URL``, classifying failures as
the real adapters do (``DeliveryFailed``; network errors propagate: transient).
"""

from __future__ import annotations

import asyncio
import os
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

import httpx
from aiohttp import web
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from clarigate.gateway.boundary.messages import Conversation, InboundMessage, MessageRef, Sender
from clarigate.gateway.boundary.outbound_items import Outbound
from clarigate.gateway.boundary.port import DeliveryFailed, GatewayPort, PlatformAdapter
from clarigate.gateway.runtime.processes import serve_pid


@dataclass
class FakePlatform:
    """The platform's API: ``POST /send`` with ``{chat, kind, text, delivery_id, pid}``."""

    arrivals: list[dict[str, Any]] = field(default_factory=list)
    shown: dict[str, dict[str, Any]] = field(default_factory=dict)  # delivery id -> first arrival
    failing_until: float = 0.0  # monotonic time until which every send gets 503
    latency: tuple[float, float] = (0.0, 0.0)
    hold_pid: int | None = None  # the next send from this process is held without an answer
    held: asyncio.Event = field(default_factory=asyncio.Event)  # set once a send is being held
    release: asyncio.Event = field(default_factory=asyncio.Event)  # answers the held send
    url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> None:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/send", self._send)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.url = f"http://127.0.0.1:{site._server.sockets[0].getsockname()[1]}"  # type: ignore[union-attr]

    async def stop(self) -> None:
        """Close the server."""
        self.release.set()
        if self._runner is not None:
            await self._runner.cleanup()

    def fail_for(self, seconds: float) -> None:
        """Answer every send with 503 for ``seconds`` from now."""
        self.failing_until = time.monotonic() + seconds

    def shown_texts(self) -> list[str]:
        """Every message shown, in arrival order."""
        return [item["text"] for item in self.shown.values()]

    def texts_by_chat(self) -> dict[str, list[str]]:
        """What each chat shows (one message per delivery id), in arrival order."""
        chats: dict[str, list[str]] = {}
        for item in self.shown.values():
            chats.setdefault(item["chat"], []).append(item["text"])
        return chats

    async def _send(self, request: web.Request) -> web.Response:
        item = await request.json()
        if time.monotonic() < self.failing_until:
            return web.json_response({"error": "unavailable"}, status=503, headers={"Retry-After": "1"})
        low, high = self.latency
        if high:
            await asyncio.sleep(low + (high - low) * (hash(item["delivery_id"]) % 100) / 100)
        self.arrivals.append(item)
        if self.hold_pid is not None and item["pid"] == self.hold_pid:
            self.hold_pid = None
            self.held.set()
            self.shown.setdefault(item["delivery_id"], item)  # the platform has it: shown
            await self.release.wait()  # the sender dies before it hears back
        self.shown.setdefault(item["delivery_id"], item)
        return web.json_response({"ok": True, "message_id": uuid.uuid4().hex})


class HttpPlatformAdapter(PlatformAdapter):
    """Platform ``test`` in a served process: messages in on ``/test/say``, replies to the fake."""

    platform: ClassVar[str] = "test"

    @classmethod
    def from_settings(cls, settings: Any, gateway: GatewayPort) -> Self:
        """Built by the registry (``extra_adapters``): it needs no settings of its own."""
        return cls(gateway)

    def __init__(self, gateway: GatewayPort) -> None:
        self.gateway = gateway
        self.url = os.environ["PLATFORM_URL"]
        self.client = httpx.AsyncClient(timeout=30)

    def routes(self) -> list[Any]:
        """``POST /test/say``: ``{chat, text, event_id}``."""

        async def say(request: Request) -> JSONResponse:
            body = await request.json()
            conv = Conversation(platform="test", chat_id=body["chat"], is_direct=True)
            message = InboundMessage(
                conversation=conv, sender=Sender(user_id="u1"), text=body["text"], event_id=body["event_id"]
            )
            return JSONResponse({"outcome": (await self.gateway.accept(message)).value})

        return [Route("/test/say", say, methods=["POST"])]

    async def send(self, conversation: Conversation, item: Outbound) -> MessageRef | None:
        """Post replies to the fake platform; progress is not shown there."""
        ref = MessageRef(platform="test", chat_id=conversation.chat_id, message_id=uuid.uuid4().hex)
        if item.kind == "progress" or item.kind == "closed":
            return ref
        payload = {
            "chat": conversation.chat_id,
            "kind": item.kind,
            "text": getattr(item, "text", None) or getattr(item, "fallback_text", ""),
            "delivery_id": getattr(item, "delivery_id", None),
            "pid": serve_pid(),  # the replica: its web process when runs have a process of their own
        }
        response = await self.client.post(f"{self.url}/send", json=payload)
        if response.status_code in (429, 500, 502, 503, 504):
            retry_after = float(response.headers.get("Retry-After", "0") or 0)
            raise DeliveryFailed("platform unavailable", permanent=False, retry_after=retry_after, code="503")
        if response.status_code >= 400:
            raise DeliveryFailed("refused", permanent=True, code=str(response.status_code))
        return ref

    async def stop(self) -> None:
        """Close the HTTP client."""
        await self.client.aclose()
