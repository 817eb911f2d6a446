"""A fake Slack Web API on 127.0.0.1 that records every call and can misbehave on purpose.

Answers like Slack does (``ok``, ``ts``, ``view``), accepts JSON and form bodies (form only
for the read methods Slack takes no JSON for: ``FORM_ONLY``),
rejects unknown tokens with ``invalid_auth`` (none at all: ``not_authed``; ``apps.connections.open``
anything but an app-level token: ``not_allowed_token_type``), blocks Block Kit
would not accept with ``invalid_blocks``, a modal Slack would not open with ``invalid_arguments``
(``views.open`` / ``push`` / ``update``: ``fake_views.py``), a reused trigger id with
``exchanged_trigger_id``, and can be told to answer the next K calls with 429 (``Retry-After``)
or 5xx, or with an ``ok: false`` error of Slack's own (HTTP 200, as Slack answers them), once or for good.
``/files-pri/…`` serves shared files to the bot token and, like Slack, its HTML sign-in page
to anyone else. Uploads (``files.getUploadURLExternal`` / ``completeUploadExternal``) are
``fake_slack_files.py``'s.

The server, its state and the shared checks (tokens, scripted failures) are here; each API
family answers from its own module, a mixin of ``FakeSlack``: ``chat.*`` and the messages as
people see them in ``fake_slack_chat.py``, ``users.info`` / ``conversations.info`` /
``usergroups.list`` and the workspace's ids and tokens in ``fake_slack_people.py``, shared files
in ``fake_slack_files.py``, ``views.*`` in ``fake_views.py``, ``assistant.threads.*`` in
``fake_agent.py``, history in ``fake_history.py``.

The chat stream (``chat.startStream`` / ``appendStream`` / ``stopStream``) is checked as Slack
documents it: ``thread_ts`` required, outside DMs ``recipient_team_id`` and ``recipient_user_id``
too (``missing_recipient_*``), ``chunks`` of known types (``invalid_chunks``), 12,000 characters
of ``markdown_text`` at most (``msg_too_long``), no text at all refused (``no_text``), an unknown
ts ``message_not_found``, a stopped (or, with ``stream_lifetime``, expired) stream
``message_not_in_streaming_state``. Every call is recorded with the time it arrived.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import web

from . import fake_history
from .fake_agent import ASSISTANT_METHODS, AgentThreads
from .fake_slack_chat import ChatMethods
from .fake_slack_files import FileMethods, SlackUploads
from .fake_slack_people import APP_TOKEN, BOT_TOKEN, BOT_USER_ID, PEOPLE_METHODS, TEAM_ID, PeopleMethods
from .fake_stream import BOT_ID, Stream, block_problems
from .fake_views import VIEW_METHODS, SlackViews

__all__ = [  # names tests take from here
    "APP_TOKEN",
    "BOT_ID",
    "BOT_TOKEN",
    "BOT_USER_ID",
    "TEAM_ID",
    "ApiCall",
    "FakeSlack",
    "Stream",
    "block_problems",
]

#: Methods whose arguments Slack reads from a form or the query only (their pages' content types)
FORM_ONLY = {"files.info", "users.info", "conversations.info"}


@dataclass
class ApiCall:
    """One request the fake received."""

    method: str
    params: dict[str, Any]
    status: int
    answer: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0  # time.monotonic() when it arrived


@dataclass
class FakeSlack(ChatMethods, PeopleMethods, FileMethods):
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
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> conversations.info "channel"
    usergroups: dict[str, dict[str, Any]] = field(default_factory=dict)  # id -> a usergroups.list entry
    files: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (bytes, content type)
    triggers_expired: bool = False  # every views.open answers expired_trigger_id
    broken: dict[str, str] = field(default_factory=dict)  # method -> the error it answers every time
    streams: dict[str, Stream] = field(default_factory=dict)  # ts -> a message chat.startStream made
    stream_lifetime: float | None = None  # seconds a stream takes appends (Slack ends it after minutes)
    user_stops_after: int | None = None  # the person presses Stop after this many appends
    file_objects: dict[str, dict[str, Any]] = field(default_factory=dict)  # file id -> files.info "file"
    outside: set[str] = field(default_factory=set)  # channels the bot is not a member of (others' DMs)
    responses: list[dict[str, Any]] = field(default_factory=list)  # what was posted to response_urls
    responded: dict[str, list[str]] = field(default_factory=dict)  # response_url path -> texts posted
    agent: AgentThreads = field(default_factory=AgentThreads)  # assistant.threads.* (fake_agent.py)
    uploads: SlackUploads = field(default_factory=SlackUploads)  # files uploaded and shared
    _response_uses: dict[str, int] = field(default_factory=dict)
    views: SlackViews = field(default_factory=SlackViews)  # modals opened (views.*), triggers spent
    connections: set[Any] = field(default_factory=set)  # client (host, port) of each TCP connection used
    _socket_news: asyncio.Condition = field(default_factory=asyncio.Condition)
    _arrivals: dict[str, int] = field(default_factory=dict)
    _ts: itertools.count = field(default_factory=lambda: itertools.count(1))
    _last_ts: float = 0.0
    missing_scopes: set[str] = field(default_factory=set)  # e.g. {"im:history"}, {"users:read"}: refused
    bot_name: str = "clarigate"  # the bot user's username (handle), auth.test's ``user``
    bot_display_name: str = "clarigate"  # the name Slack shows for the bot user (users.info)
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

    def refuse_every(self, error: str, methods: set[str]) -> None:
        """Answer every call of ``methods`` ``{"ok": false, "error": error}`` from now on."""
        for method in methods:
            self.broken[method] = error

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

    def attempts(self, method: str) -> list[ApiCall]:
        """Every call to ``method``, failed ones included."""
        return [c for c in self.calls if c.method == method]

    async def start(self, port: int = 0) -> None:
        """Listen on ``port`` of 127.0.0.1 (0: a random free one; the old one: back after ``stop``)."""
        app = web.Application()
        app.router.add_post("/api/{method}", self._handle)
        app.router.add_get("/link", self._socket)
        app.router.add_get("/files-pri/{path:.*}", self._file)
        app.router.add_post("/commands/{path:.*}", self._response_url)
        app.router.add_post("/upload/v1/{file_id}", self.uploads.receive)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = self.uploads.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

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

    async def push(
        self, payload: dict[str, Any], envelope_id: str, kind: str = "events_api", retry_attempt: int = 0
    ) -> None:
        """Send an envelope to the first Socket Mode connection, as Slack does (an event left
        unacknowledged comes again in a new envelope, with its ``retry_attempt`` and reason)."""
        envelope: dict[str, Any] = {
            "envelope_id": envelope_id,
            "type": kind,
            "accepts_response_payload": False,
            "payload": payload,
        }
        if retry_attempt:
            envelope.update(retry_attempt=retry_attempt, retry_reason="timeout")
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

    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        self.connections.add(request.transport.get_extra_info("peername") if request.transport else None)
        arrived = time.monotonic()
        raw = await request.text()
        if request.content_type == "application/json" and raw and method in FORM_ONLY:
            params = dict(request.query)  # Slack reads no JSON body for these: their arguments are missing
        elif request.content_type == "application/json" and raw:
            params = json.loads(raw)
        else:
            params = dict(parse_qsl(raw, keep_blank_values=True))
            params.update(dict(request.query))
            for key in ("blocks", "view", "chunks"):
                if isinstance(params.get(key), str):
                    params[key] = json.loads(params[key])
        self._arrivals[method] = self._arrivals.get(method, 0) + 1
        if method in self.held:
            await self.held[method].wait()
        if self.failures and (self.failing_methods is None or method in self.failing_methods):
            status, retry_after = self.failures.pop(0)
            self.calls.append(ApiCall(method, params, status, at=arrived))
            headers = {"Retry-After": str(retry_after)} if status == 429 else {}
            body = {"ok": False, "error": "ratelimited" if status == 429 else "fatal_error"}
            return web.json_response(body, status=status, headers=headers)
        refusal = next((r for r in self.refusals if r[1] is None or method in r[1]), None)
        if refusal is not None or method in self.broken:
            if refusal is not None:
                self.refusals.remove(refusal)
            refused = {"ok": False, "error": refusal[0] if refusal is not None else self.broken[method]}
            self.calls.append(ApiCall(method, params, 200, refused, at=arrived))
            return web.json_response(refused)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or params.get("token", "")
        if not token:
            answer = {"ok": False, "error": "not_authed"}
        elif token not in self.valid_tokens:
            answer = {"ok": False, "error": "invalid_auth"}
        elif method == "apps.connections.open" and not token.startswith("xapp-"):
            answer = {"ok": False, "error": "not_allowed_token_type"}  # app-level tokens only
        else:
            answer = self._answer(method, params)
            if answer.get("ok"):
                self.agent.message_sent(method, params)  # a message in a thread ends its status
        self.calls.append(ApiCall(method, params, 200, answer, at=arrived))
        return web.json_response(answer)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if (uploaded := self.uploads.answer(method, params)) is not None:
            return uploaded
        if method.startswith("chat."):
            return self._answer_chat(method, params)  # fake_slack_chat.py, the stream's included
        if method in VIEW_METHODS:
            return self.views.answer(method, params, TEAM_ID, expired=self.triggers_expired)
        if method == "files.info":
            return self._file_info(params)
        if method in PEOPLE_METHODS:
            return self._answer_people(method, params)
        if method in ASSISTANT_METHODS:
            return self.agent.answer(method, params)
        if method in fake_history.READ_METHODS:
            return fake_history.read(list(self._messages()[0].values()), method, params, self.missing_scopes)
        if method == "auth.test":
            return {
                "ok": True,
                "url": "https://test.slack.com/",
                "team": "Test",
                "user": self.bot_name,
                "team_id": TEAM_ID,
                "user_id": BOT_USER_ID,
                "bot_id": BOT_ID,
            }
        if method == "apps.connections.open":
            return {"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"}
        return {"ok": True}
