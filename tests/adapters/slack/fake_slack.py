"""A fake Slack Web API on 127.0.0.1 that records every call and can misbehave on purpose.

Answers like Slack does (``ok``, ``ts``, ``view``), accepts JSON and form bodies,
rejects unknown tokens with ``invalid_auth``, blocks Block Kit would not accept with
``invalid_blocks``, a reused trigger id with ``exchanged_trigger_id``, and can be told
to answer the next K calls with 429 (``Retry-After``) or 5xx, or with an ``ok: false``
error of Slack's own (HTTP 200, as Slack answers them). ``/files-pri/…`` serves shared
files to the bot token and, like Slack, its HTML sign-in page to anyone else.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web
from slack_sdk.models.blocks import Block

BOT_TOKEN = "xoxb-test-token"
TEAM_ID = "T0TEAM"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
APP_TOKEN = "xapp-test-token"
MAX_MESSAGE_BLOCKS = 50
SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


def block_problems(blocks: Any) -> list[str]:
    """Why Slack would answer ``invalid_blocks``: not a list, more than 50, or a block Block Kit
    refuses (``slack_sdk``'s models check Slack's documented limits)."""
    if not isinstance(blocks, list):
        return ["blocks must be an array"]
    if len(blocks) > MAX_MESSAGE_BLOCKS:
        return [f"no more than {MAX_MESSAGE_BLOCKS} items allowed [json-pointer:/blocks]"]
    problems = []
    for index, block in enumerate(blocks):
        try:
            parsed = Block.parse(block)
            if parsed is None:
                raise ValueError("unknown block type")
            parsed.to_dict()
        except Exception as error:  # noqa: BLE001 - any refusal is a message for the caller
            problems.append(f"{error} [json-pointer:/blocks/{index}]")
    return problems


@dataclass
class ApiCall:
    """One request the fake received."""

    method: str
    params: dict[str, Any]
    status: int
    answer: dict[str, Any] = field(default_factory=dict)


@dataclass
class FakeSlack:
    """The server's state: recorded calls, scripted failures, ts counter."""

    calls: list[ApiCall] = field(default_factory=list)
    failures: list[tuple[int, int]] = field(default_factory=list)  # (status, retry_after) per next call
    failing_methods: set[str] | None = None  # only these methods fail (None: any)
    valid_tokens: set[str] = field(default_factory=lambda: {BOT_TOKEN, APP_TOKEN})
    sockets: list[web.WebSocketResponse] = field(default_factory=list)  # Socket Mode connections
    socket_acks: list[dict[str, Any]] = field(default_factory=list)  # what clients sent back
    held: dict[str, asyncio.Event] = field(default_factory=dict)  # method -> answered once set
    refusals: list[tuple[str, set[str] | None]] = field(default_factory=list)  # (error, methods)
    users: dict[str, dict[str, Any]] = field(default_factory=dict)  # user id -> users.info "user"
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (bytes, content type)
    triggers_expired: bool = False  # every views.open answers expired_trigger_id
    _used_triggers: set[str] = field(default_factory=set)
    connections: set[Any] = field(default_factory=set)  # client (host, port) of each TCP connection used
    _socket_news: asyncio.Condition = field(default_factory=asyncio.Condition)
    _arrivals: dict[str, int] = field(default_factory=dict)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(1))
    _runner: web.AppRunner | None = None
    port: int = 0

    @property
    def api_url(self) -> str:
        """What ``SLACK_API_URL`` is set to in tests."""
        return f"http://127.0.0.1:{self.port}/api/"

    def fail_next(
        self, count: int, status: int = 429, retry_after: int = 1, methods: set[str] | None = None
    ) -> None:
        """Answer the next ``count`` calls (of ``methods``) with ``status``."""
        self.failures.extend([(status, retry_after)] * count)
        self.failing_methods = methods

    def refuse_next(self, error: str, methods: set[str] | None = None, count: int = 1) -> None:
        """Answer the next ``count`` calls (of ``methods``) ``{"ok": false, "error": error}``, HTTP 200."""
        self.refusals.extend([(error, methods)] * count)

    def add_user(self, user_id: str, display_name: str = "", real_name: str = "", name: str = "") -> None:
        """A person ``users.info`` knows, shaped as Slack's user object."""
        self.users[user_id] = {
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name or user_id.lower(),
            "real_name": real_name,
            "is_bot": False,
            "profile": {"display_name": display_name, "real_name": real_name},
        }

    def add_file(self, file_id: str, name: str, data: bytes, mimetype: str) -> dict[str, Any]:
        """Store a file and return its ``files`` entry as a message event carries it."""
        path = f"{TEAM_ID}-{file_id}/download/{name}"
        self.files[path] = (data, mimetype)
        base = f"http://127.0.0.1:{self.port}/files-pri/"
        return {
            "id": file_id,
            "created": 1700000000,
            "timestamp": 1700000000,
            "name": name,
            "title": name,
            "mimetype": mimetype,
            "filetype": name.rsplit(".", 1)[-1],
            "pretty_type": name.rsplit(".", 1)[-1].upper(),
            "user": "U1",
            "mode": "hosted",
            "editable": False,
            "is_external": False,
            "external_type": "",
            "size": len(data),
            "url_private": f"{base}{TEAM_ID}-{file_id}/{name}",
            "url_private_download": f"{base}{path}",
        }

    def hold(self, method: str) -> asyncio.Event:
        """Keep calls to ``method`` waiting (recorded in ``arrived``) until the returned event is set."""
        self.held[method] = asyncio.Event()
        return self.held[method]

    def arrived(self, method: str) -> int:
        """How many calls to ``method`` reached the server, answered or still held."""
        return self._arrivals.get(method, 0)

    def of(self, method: str) -> list[dict[str, Any]]:
        """Params of the successful calls to ``method``, oldest first."""
        return [c.params for c in self.calls if c.method == method and c.answer.get("ok")]

    def posted(self, index: int = -1) -> dict[str, Any]:
        """A message the bot posted: its ``chat.postMessage`` params plus the ``ts`` it got."""
        calls = [c for c in self.calls if c.method == "chat.postMessage" and c.answer.get("ok")]
        return {**calls[index].params, "ts": calls[index].answer["ts"]}

    def edits(self, ts: str | None = None) -> list[dict[str, Any]]:
        """Params of the successful ``chat.update`` calls (of message ``ts``), oldest first."""
        return [p for p in self.of("chat.update") if ts is None or p.get("ts") == ts]

    def shown(self) -> list[dict[str, Any]]:
        """The bot's messages as people see them now: posts with their edits, deleted ones gone."""
        return list(self._messages()[0].values())

    def last_shown(self) -> dict[str, Any]:
        """The message the bot posted or edited last, as people see it now."""
        messages, last = self._messages()
        return messages[last]

    def _messages(self) -> tuple[dict[str, dict[str, Any]], str]:
        messages: dict[str, dict[str, Any]] = {}
        last = ""
        for call in self.calls:
            ts = call.answer.get("ts") if call.method == "chat.postMessage" else call.params.get("ts")
            if not call.answer.get("ok") or ts is None:
                continue
            if call.method == "chat.postMessage":
                messages[ts], last = {**call.params, "ts": ts}, ts
            elif call.method == "chat.update" and ts in messages:
                messages[ts].update({k: call.params[k] for k in ("text", "blocks") if k in call.params})
                last = ts
            elif call.method == "chat.delete":
                messages.pop(ts, None)
        return messages, last

    def attempts(self, method: str) -> list[ApiCall]:
        """Every call to ``method``, failed ones included."""
        return [c for c in self.calls if c.method == method]

    async def start(self) -> None:
        """Listen on a random free port of 127.0.0.1."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/link", self._socket)
        app.router.add_get("/files-pri/{path:.*}", self._file)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def stop(self) -> None:
        """Close the server."""
        for socket in self.sockets:
            await socket.close()
        if self._runner is not None:
            await self._runner.cleanup()

    async def wait_for_socket(self, predicate: Any, timeout: float = 10) -> None:  # noqa: ASYNC109
        """Wait until ``predicate(self)`` holds (a connection opened, an envelope acked)."""

        async def until() -> None:
            async with self._socket_news:
                await self._socket_news.wait_for(lambda: predicate(self))

        await asyncio.wait_for(until(), timeout)

    async def push(self, payload: dict[str, Any], envelope_id: str, kind: str = "events_api") -> None:
        """Send an envelope to the first Socket Mode connection, as Slack does."""
        envelope = {
            "envelope_id": envelope_id,
            "type": kind,
            "accepts_response_payload": False,
            "payload": payload,
        }
        await self.sockets[0].send_json(envelope)

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        socket = web.WebSocketResponse()
        await socket.prepare(request)
        await socket.send_json(
            {"type": "hello", "num_connections": 1, "connection_info": {"app_id": "A0APP"}}
        )
        async with self._socket_news:
            self.sockets.append(socket)
            self._socket_news.notify_all()
        async for message in socket:
            if message.type.name == "TEXT":
                async with self._socket_news:
                    self.socket_acks.append(json.loads(message.data))
                    self._socket_news.notify_all()
        return socket

    async def _file(self, request: web.Request) -> web.Response:
        self._arrivals["files-pri"] = self._arrivals.get("files-pri", 0) + 1
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        stored = self.files.get(request.match_info["path"])
        if token != BOT_TOKEN or stored is None:
            return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
        data, mimetype = stored
        return web.Response(body=data, content_type=mimetype)

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.connections.add(request.transport.get_extra_info("peername") if request.transport else None)
        raw = await request.text()
        if request.content_type == "application/json" and raw:
            params = json.loads(raw)
        else:
            params = dict(parse_qsl(raw, keep_blank_values=True))
            params.update(dict(request.query))
            for key in ("blocks", "view"):
                if isinstance(params.get(key), str):
                    params[key] = json.loads(params[key])
        self._arrivals[method] = self._arrivals.get(method, 0) + 1
        if method in self.held:
            await self.held[method].wait()
        if self.failures and (self.failing_methods is None or method in self.failing_methods):
            status, retry_after = self.failures.pop(0)
            self.calls.append(ApiCall(method, params, status))
            headers = {"Retry-After": str(retry_after)} if status == 429 else {}
            body = {"ok": False, "error": "ratelimited" if status == 429 else "fatal_error"}
            return web.json_response(body, status=status, headers=headers)
        refusal = next((r for r in self.refusals if r[1] is None or method in r[1]), None)
        if refusal is not None:
            self.refusals.remove(refusal)
            refused = {"ok": False, "error": refusal[0]}
            self.calls.append(ApiCall(method, params, 200, refused))
            return web.json_response(refused)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or params.get("token", "")
        answer = (
            self._answer(method, params)
            if token in self.valid_tokens
            else {"ok": False, "error": "invalid_auth"}
        )
        self.calls.append(ApiCall(method, params, 200, answer))
        return web.json_response(answer)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in ("chat.postMessage", "chat.update") and "blocks" in params:
            problems = block_problems(params["blocks"])
            if problems:
                return {
                    "ok": False,
                    "error": "invalid_blocks",
                    "errors": problems,
                    "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
                }
        if method == "views.open":
            trigger = str(params.get("trigger_id") or "")
            if self.triggers_expired:
                return {"ok": False, "error": "expired_trigger_id"}
            if trigger in self._used_triggers:
                return {"ok": False, "error": "exchanged_trigger_id"}
            self._used_triggers.add(trigger)
        if method == "users.info":
            user = self.users.get(str(params.get("user")))
            return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}
        return self._answer_ok(method, params)

    def _answer_ok(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://test.slack.com/",
                "team": "Test",
                "user": "clarigate",
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
            }
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}
        if method == "chat.postMessage":
            ts = f"1700000000.{next(self._ts):06d}"
            message = {"type": "message", "text": params.get("text"), "ts": ts, "bot_id": BOT_ID}
            if params.get("blocks"):
                message["blocks"] = params["blocks"]
            return {"ok": True, "channel": params.get("channel"), "ts": ts, "message": message}
        if method == "chat.update":
            return {
                "ok": True,
                "channel": params.get("channel"),
                "ts": params.get("ts"),
                "text": params.get("text"),
            }
        if method == "chat.postEphemeral":
            return {"ok": True, "message_ts": f"1700000000.{next(self._ts):06d}"}
        if method == "views.open":
            view = dict(params.get("view") or {})
            view.update({"id": f"V{next(self._ts):06d}", "hash": "h1", "team_id": TEAM_ID})
            return {"ok": True, "view": view}
        return {"ok": True}
