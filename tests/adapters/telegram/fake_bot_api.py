"""A small Bot API server on 127.0.0.1 for tests: records calls, answers like Telegram.

Point PTB at it with ``base_url=f"{server.url}/bot"`` (PTB appends the token).
Calls are form-encoded; ``reply_markup`` arrives as a JSON string and is decoded
here so tests can read keyboards. ``fail_next`` scripts 429 / 500 / 400 answers.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

BOT_USER = {"id": 4242, "is_bot": True, "first_name": "Clari", "username": "clari_bot"}


@dataclass
class Call:
    """One Bot API call the server received."""

    method: str
    params: dict[str, Any]

    @property
    def markup(self) -> dict[str, Any] | None:
        """The decoded ``reply_markup``, if any."""
        raw = self.params.get("reply_markup")
        return json.loads(raw) if raw else None

    @property
    def buttons(self) -> list[list[dict[str, Any]]]:
        """The inline keyboard rows (empty when there is none)."""
        return (self.markup or {}).get("inline_keyboard", [])


@dataclass
class FakeBotApi:
    """The server's state: calls, queued updates for ``getUpdates``, scripted failures."""

    token: str = "123456:TEST-token"
    calls: list[Call] = field(default_factory=list)
    updates: list[dict[str, Any]] = field(default_factory=list)
    failures: dict[str, list[tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    url: str = ""
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1000))
    _runner: web.AppRunner | None = None
    _new_update: asyncio.Event = field(default_factory=asyncio.Event)

    async def start(self) -> None:
        """Listen on a free loopback port."""
        app = web.Application()
        app.router.add_post("/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        """Close the server."""
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """What to give PTB as ``base_url`` / ``TELEGRAM_API_URL``."""
        return f"{self.url}/bot"

    def fail_next(
        self, method: str, status: int, times: int = 1, retry_after: int = 1, description: str = ""
    ) -> None:
        """Answer the next ``times`` calls of ``method`` with an error like Telegram's."""
        body: dict[str, Any] = {
            "ok": False,
            "error_code": status,
            "description": description or f"error {status}",
        }
        if status == 429:
            body["parameters"] = {"retry_after": retry_after}
            body["description"] = f"Too Many Requests: retry after {retry_after}"
        self.failures.setdefault(method, []).extend([(status, body)] * times)

    def queue_update(self, update: dict[str, Any]) -> None:
        """Serve ``update`` to the next ``getUpdates``."""
        self.updates.append(update)
        self._new_update.set()

    def of(self, method: str) -> list[Call]:
        """Calls of one method, oldest first."""
        return [c for c in self.calls if c.method == method]

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return web.json_response(
                {"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401
            )
        form = await request.post()
        params: dict[str, Any] = {k: v for k, v in form.items()}
        self.calls.append(Call(method, params))
        scripted = self.failures.get(method)
        if scripted:
            status, body = scripted.pop(0)
            return web.json_response(body, status=status)
        if method == "getUpdates":
            return await self._get_updates(params)
        result = self._result(method, params)
        return web.json_response({"ok": True, "result": result})

    def _result(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return BOT_USER
        if method in ("sendMessage", "editMessageText"):
            chat_id = int(params["chat_id"])
            message = {
                "message_id": int(params["message_id"]) if "message_id" in params else next(self._ids),
                "date": int(time.time()),
                "chat": {"id": chat_id, "type": "private" if chat_id > 0 else "supergroup"},
                "from": BOT_USER,
                "text": params.get("text", ""),
            }
            if "message_thread_id" in params:
                message["message_thread_id"] = int(params["message_thread_id"])
            return message
        return True

    async def _get_updates(self, params: dict[str, Any]) -> web.Response:
        offset = int(params.get("offset", 0) or 0)
        timeout = float(params.get("timeout", 0) or 0)
        deadline = time.monotonic() + min(timeout, 2.0)
        while True:
            ready = [u for u in self.updates if u["update_id"] >= offset]
            # Like Telegram: asking with an offset confirms (drops) every earlier update.
            self.updates = ready
            if ready or time.monotonic() >= deadline:
                return web.json_response({"ok": True, "result": ready[:100]})
            self._new_update.clear()
            try:
                await asyncio.wait_for(
                    self._new_update.wait(), timeout=max(0.01, deadline - time.monotonic())
                )
            except TimeoutError:
                pass
