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

from .fake_agent import ASSISTANT_METHODS, AgentThreads
from .fake_slack_files import SlackUploads
from .fake_stream import BOT_ID, STREAM_METHODS, Stream, StreamMethods, block_problems
from .fake_views import VIEW_METHODS, SlackViews

__all__ = ["BOT_ID", "Stream", "block_problems"]  # names tests take from here

from . import fake_history

BOT_TOKEN = "xoxb-test-token"
TEAM_ID = "T0TEAM"
BOT_USER_ID = "U0BOT"
APP_TOKEN = "xapp-test-token"
#: Methods whose arguments Slack reads from a form or the query only (their pages' content types)
FORM_ONLY = {"files.info", "users.info", "conversations.info"}
SIGN_IN_PAGE = "<!DOCTYPE html><html><head><title>Slack</title></head><body>Sign in</body></html>"


@dataclass
class ApiCall:
    """One request the fake received."""

    method: str
    params: dict[str, Any]
    status: int
    answer: dict[str, Any] = field(default_factory=dict)
    at: float = 0.0  # time.monotonic() when it arrived


@dataclass
class FakeSlack(StreamMethods):
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

    def add_user(
        self, user_id: str, display_name: str = "", real_name: str = "", name: str = "", locale: str = "en-US"
    ) -> None:
        """A person ``users.info`` knows, shaped as Slack's user object (``locale``: asked for)."""
        self.users[user_id] = {
            "locale": locale,
            "id": user_id,
            "team_id": TEAM_ID,
            "name": name or user_id.lower(),
            "real_name": real_name,
            "is_bot": False,
            "profile": {"display_name": display_name, "real_name": real_name},
        }

    def add_channel(self, channel_id: str, name: str, *, private: bool = False) -> None:
        """A channel ``conversations.info`` knows, shaped as Slack's conversation object."""
        kind = {"is_channel": not private, "is_group": private, "is_private": private, "is_im": False}
        self.channels[channel_id] = {"id": channel_id, "name": name, **kind, "is_archived": False}

    def add_usergroup(self, group_id: str, handle: str, name: str) -> None:
        """A user group ``usergroups.list`` lists, shaped as Slack's usergroup object."""
        self.usergroups[group_id] = {"id": group_id, "team_id": TEAM_ID, "name": name, "handle": handle}
        self.usergroups[group_id] |= {"is_usergroup": True, "date_delete": 0, "user_count": 2}

    def bot_user(self) -> dict[str, Any]:
        """The bot user as ``users.info`` shows it: its username (``name``, what auth.test calls
        ``user``) and the name Slack shows for it, the app's bot display name (``real_name``)."""
        profile = {"real_name": self.bot_display_name, "display_name": "", "bot_id": BOT_ID}
        return {
            "id": BOT_USER_ID,
            "team_id": TEAM_ID,
            "name": self.bot_name,
            "real_name": self.bot_display_name,
            "is_bot": True,
            "locale": "en-US",
            "profile": {**profile, "api_app_id": "A0APP", "always_active": True},
        }

    def people_asked(self) -> list[str]:
        """Whom ``users.info`` was asked about (failed calls too), oldest first: people, not the
        bot user, whose shown name the adapter asks for once at start."""
        return [str(c.params["user"]) for c in self.attempts("users.info") if c.params["user"] != BOT_USER_ID]

    def add_file(self, file_id: str, name: str, data: bytes, mimetype: str) -> dict[str, Any]:
        """Store a file and return its ``files`` entry as a message event carries it."""
        path = f"{TEAM_ID}-{file_id}/download/{name}"
        self.files[path] = (data, mimetype)
        base = f"http://127.0.0.1:{self.port}/files-pri/"
        self.file_objects[file_id] = {
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
        return dict(self.file_objects[file_id])

    def add_connect_file(self, file_id: str, name: str, data: bytes, mimetype: str) -> dict[str, Any]:
        """A file shared from another organisation: stored, and returned as a message event carries
        it in a Slack Connect channel, its id alone (https://api.slack.com/types/file#slack_connect_files)."""
        self.add_file(file_id, name, data, mimetype)
        return {
            "id": file_id,
            "mode": "file_access",
            "file_access": "check_file_info",
            "created": 0,
            "timestamp": 0,
            "user": "",
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

    def streamed(self) -> list[ApiCall]:
        """The calls of the chat stream methods, failed ones included, oldest first."""
        return [c for c in self.calls if c.method in STREAM_METHODS]

    def _messages(self) -> tuple[dict[str, dict[str, Any]], str]:
        """Each message as people see it: ``text`` (and ``blocks``); a streamed one also has
        ``streaming`` (still taking text) and ``tasks`` (its task cards by id)."""
        messages: dict[str, dict[str, Any]] = {}
        last = ""
        for call in self.calls:
            posted = call.method in ("chat.postMessage", "chat.startStream")
            ts = call.answer.get("ts") if posted else call.params.get("ts")
            if not call.answer.get("ok") or ts is None:
                continue
            if call.method == "chat.postMessage":
                messages[ts], last = {**call.params, "ts": ts}, ts
            elif call.method == "chat.startStream":
                message = {k: v for k, v in call.params.items() if k != "chunks"}
                messages[ts], last = {**message, "ts": ts, "text": "", "streaming": True, "tasks": {}}, ts
                self._stream_into(messages[ts], call.params)
            elif call.method in ("chat.appendStream", "chat.stopStream") and ts in messages:
                self._stream_into(messages[ts], call.params)
                if call.params.get("blocks"):
                    messages[ts]["blocks"] = call.params["blocks"]  # the stream's closing blocks
                messages[ts]["streaming"] = call.method == "chat.appendStream"
                last = ts
            elif call.method == "chat.update" and ts in messages:
                changed = ("text", "blocks", "metadata")
                messages[ts].update({k: call.params[k] for k in changed if k in call.params})
                messages[ts].pop("tasks", None)  # the message's content is replaced whole
                last = ts
            elif call.method == "chat.delete":
                messages.pop(ts, None)
        return messages, last

    @staticmethod
    def _stream_into(message: dict[str, Any], params: dict[str, Any]) -> None:
        message["text"] = message.get("text", "") + str(params.get("markdown_text") or "")
        for chunk in params.get("chunks") or []:
            if chunk.get("type") == "markdown_text":
                message["text"] += chunk["text"]
            elif chunk.get("type") == "task_update":
                message.setdefault("tasks", {})[chunk["id"]] = chunk

    def _new_ts(self) -> str:
        """A message ts as Slack makes them: the time it was posted, unique in the channel."""
        self._last_ts = max(time.time(), self._last_ts + 0.000001)
        return f"{self._last_ts:.6f}"

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

    async def _file(self, request: web.Request) -> web.Response:
        self._arrivals["files-pri"] = self._arrivals.get("files-pri", 0) + 1
        token = request.headers.get("Authorization", "").removeprefix("Bearer ")
        stored = self.files.get(request.match_info["path"])
        if token != BOT_TOKEN or stored is None:
            return web.Response(text=SIGN_IN_PAGE, content_type="text/html")
        data, mimetype = stored
        return web.Response(body=data, content_type=mimetype)

    def response_url(self, command: str) -> str:
        """A slash command's ``response_url``, served here as Slack's hooks answer it."""
        return f"http://127.0.0.1:{self.port}/commands/{TEAM_ID}/{command}/x"

    async def _response_url(self, request: web.Request) -> web.Response:
        """A POST to a response_url: ``ok``; after five uses 404 ``used_url``, as Slack's hooks do."""
        path = request.match_info["path"]
        self._response_uses[path] = self._response_uses.get(path, 0) + 1
        if self._response_uses[path] > 5:
            return web.Response(status=404, text="used_url")
        self.responses.append(await request.json())
        self.responded.setdefault(path, []).append(str(self.responses[-1].get("text")))
        return web.Response(text="ok")

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
        if method.startswith("chat.") and str(params.get("channel")) in self.outside:
            return {"ok": False, "error": "channel_not_found"}  # as Slack answers for others' DMs
        if method in ("chat.postMessage", "chat.update") and "blocks" in params:
            problems = block_problems(params["blocks"])
            if problems:
                return {
                    "ok": False,
                    "error": "invalid_blocks",
                    "errors": problems,
                    "response_metadata": {"messages": [f"[ERROR] {p}" for p in problems]},
                }
        if method in VIEW_METHODS:
            return self.views.answer(method, params, TEAM_ID, expired=self.triggers_expired)
        if method == "files.info":  # form-encoded arguments only, as Slack documents it
            file = self.file_objects.get(str(params.get("file")))
            return {"ok": True, "file": file} if file else {"ok": False, "error": "file_not_found"}
        if method == "users.info":  # https://api.slack.com/methods/users.info
            if "users:read" in self.missing_scopes:
                refused = {"ok": False, "error": "missing_scope", "needed": "users:read"}
                return {**refused, "provided": "chat:write"}  # Slack names both scopes
            asked = str(params.get("user"))
            user = self.users.get(asked) or (self.bot_user() if asked == BOT_USER_ID else None)
            if user and str(params.get("include_locale")).lower() not in ("true", "1"):
                user = {k: v for k, v in user.items() if k != "locale"}  # only asked for, as Slack does
            return {"ok": True, "user": user} if user else {"ok": False, "error": "user_not_found"}
        if method == "conversations.info":  # https://api.slack.com/methods/conversations.info
            return self._conversation(str(params.get("channel")))
        if method == "usergroups.list":  # https://api.slack.com/methods/usergroups.list
            if "usergroups:read" in self.missing_scopes:
                return {
                    "ok": False,
                    "error": "missing_scope",
                    "needed": "usergroups:read",
                    "provided": "chat:write",
                }
            return {"ok": True, "usergroups": list(self.usergroups.values())}
        if method in STREAM_METHODS:
            return self._answer_stream(method, params)
        if method in ASSISTANT_METHODS:
            return self.agent.answer(method, params)
        if method in fake_history.READ_METHODS:
            return fake_history.read(list(self._messages()[0].values()), method, params, self.missing_scopes)
        if method == "chat.delete":
            self.streams.pop(str(params.get("ts")), None)  # a deleted stream takes nothing more
        return self._answer_ok(method, params)

    def _conversation(self, channel_id: str) -> dict[str, Any]:
        """``conversations.info``: ``channels:read`` for a public channel, ``groups:read`` a private one."""
        channel = self.channels.get(channel_id)
        needed = "groups:read" if channel and channel["is_private"] else "channels:read"
        if needed in self.missing_scopes:
            return {"ok": False, "error": "missing_scope", "needed": needed, "provided": "chat:write"}
        return {"ok": True, "channel": channel} if channel else {"ok": False, "error": "channel_not_found"}

    def _answer_ok(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
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
        if method == "chat.postMessage":
            ts = self._new_ts()
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
            return {"ok": True, "message_ts": self._new_ts()}
        return {"ok": True}
