"""A fake Feishu open API on 127.0.0.1: tenant token, message create/reply/patch, resources, bot info.

It records every call and can be told to answer the next calls with 429 or 500,
so the real lark-oapi client is exercised over real HTTP. Like Feishu, it refuses
a card message whose request body is over 30 KB or whose card breaks the JSON 2.0
component rules (``card_schema.py``).
"""

from __future__ import annotations

import itertools
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .card_schema import CardRuleBroken, check_card

TOKEN = "t-fake-tenant-token"
BOT_OPEN_ID = "ou_bot"
#: Feishu: "卡片及富文本消息请求体最大不能超过30KB".
CARD_BODY_LIMIT = 30 * 1024


@dataclass
class Call:
    """One request the fake received."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any
    size: int = 0  # bytes of the request body
    status: int = 0  # the HTTP status the fake answered with

    def card(self) -> dict[str, Any]:
        """The card a create/reply/patch carried."""
        return json.loads(self.body["content"])


@dataclass
class Failure:
    """Answer the next matching call with this instead of success."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str] = field(default_factory=dict)
    method: str | None = None
    path_part: str = "/im/v1/"


class FakeOpenApi:
    """Start with ``start()``; ``url`` is the domain to give the adapter."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.cards: dict[str, dict[str, Any]] = {}  # message id -> the card it shows now, in posting order
        self.hold: threading.Event | None = None  # when set up, message calls wait until it is set
        self.message_arrived = threading.Event()  # set by every message call (before ``hold``)
        self.token = TOKEN  # the tenant token that is valid now (``revoke_token`` changes it)
        #: People's names by open_id, readable only when the app has the contact scope.
        self.names: dict[str, str] = {}
        self.contact_scope = False
        #: Files people sent, by (message id, key): (type the API wants, bytes, content type).
        self.resources: dict[tuple[str, str], tuple[str, bytes, str]] = {}
        #: Feishu sends at most one message per ``uuid`` within an hour: a repeat gets the first one.
        self.by_uuid: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """The origin to use as ``FEISHU_DOMAIN``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeOpenApi:
        """Serve in a background thread."""
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def fail_next(
        self,
        status: int,
        code: int,
        times: int = 1,
        method: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        """The next ``times`` message calls (optionally only ``method``) fail with ``status``/``code``."""
        for _ in range(times):
            self.failures.append(
                Failure(status, {"code": code, "msg": "scripted failure"}, headers or {}, method)
            )

    def revoke_token(self) -> None:
        """Invalidate the tenant token handed out so far (as a secret reset does); a new one is issued."""
        self.token = f"{TOKEN}-{next(self._ids)}"

    def message_calls(self) -> list[Call]:
        """Calls that created, replied to or updated a message."""
        return [
            c
            for c in self.calls
            if c.path.startswith("/open-apis/im/v1/messages") and "/resources/" not in c.path
        ]

    def posted(self) -> list[Call]:
        """Successful-or-not message creations and replies (POSTs)."""
        return [c for c in self.message_calls() if c.method == "POST"]

    def patched(self) -> list[Call]:
        """Card updates (PATCHes)."""
        return [c for c in self.message_calls() if c.method == "PATCH"]

    def shown(self) -> list[dict[str, Any]]:
        """The cards the chat shows now (updates applied), oldest first."""
        return list(self.cards.values())

    def _answer(self, call: Call) -> tuple[int, Any, dict[str, str]]:
        method, path, headers = call.method, call.path, call.headers
        if path == "/open-apis/auth/v3/tenant_access_token/internal":
            return 200, {"code": 0, "msg": "ok", "tenant_access_token": self.token, "expire": 7200}, {}
        if path == "/callback/ws/endpoint":  # the long connection's bootstrap: no websocket here
            return 200, {"code": 403, "msg": "the fake has no websocket"}, {}
        if headers.get("authorization") != f"Bearer {self.token}":
            return 401, {"code": 99991663, "msg": "invalid tenant access token"}, {}
        for failure in self.failures:
            if failure.path_part in path and failure.method in (None, method):
                self.failures.remove(failure)
                return failure.status, failure.body, failure.headers
        if "/resources/" in path and method == "GET":
            return self._resource(path, call.query)
        if path.startswith("/open-apis/contact/v3/users/"):
            return self._user(path.rsplit("/", 1)[-1], call.query)
        if path == "/open-apis/bot/v3/info":
            return 200, {"code": 0, "msg": "ok", "bot": {"open_id": BOT_OPEN_ID, "app_name": "clarigate"}}, {}
        if path.startswith("/open-apis/im/v1/messages"):
            refusal = self._refusal(call)
            if refusal is not None:
                return 400, refusal, {}
            if method == "POST":
                if call.body.get("uuid") in self.by_uuid:
                    message_id = self.by_uuid[call.body["uuid"]]
                    return 200, {"code": 0, "msg": "success", "data": {"message_id": message_id}}, {}
                message_id = f"om_{next(self._ids)}"
                self.cards[message_id] = call.card()
                if call.body.get("uuid"):
                    self.by_uuid[call.body["uuid"]] = message_id
                return 200, {"code": 0, "msg": "success", "data": {"message_id": message_id}}, {}
            message_id = path.rsplit("/", 1)[-1]
            if message_id not in self.cards:
                return 400, {"code": 230001, "msg": "message not found"}, {}
            self.cards[message_id] = call.card()
            return 200, {"code": 0, "msg": "success", "data": {}}, {}
        return 404, {"code": 404, "msg": "not found"}, {}

    def _user(self, open_id: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if not self.contact_scope:
            return 400, {"code": 99991672, "msg": "Access denied. One of the scopes is required"}, {}
        if query.get("user_id_type") != ["open_id"] or open_id not in self.names:
            return 400, {"code": 41050, "msg": "no user authority error"}, {}
        user = {"open_id": open_id, "name": self.names[open_id]}
        return 200, {"code": 0, "msg": "success", "data": {"user": user}}, {}

    def _resource(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        """``GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file``."""
        parts = path.split("/")
        message_id, key = parts[-3], parts[-1]
        found = self.resources.get((message_id, key))
        if found is None or query.get("type") != [found[0]]:
            return 400, {"code": 234003, "msg": "File not in msg."}, {}
        return 200, found[1], {"Content-Type": found[2]}

    def _refusal(self, call: Call) -> dict[str, Any] | None:
        """Feishu's answer to a card it would not show, else None."""
        if call.size > CARD_BODY_LIMIT:
            return {"code": 230025, "msg": f"message content too long: {call.size} bytes"}
        try:
            check_card(call.card())
        except (CardRuleBroken, KeyError, TypeError, ValueError) as broken:
            return {"code": 230099, "msg": f"Failed to create card content: {broken!r}"}
        return None

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                call = Call(self.command, parts.path, parse_qs(parts.query), headers, body, len(raw))
                fake.calls.append(call)
                if "/im/v1/" in parts.path:
                    fake.message_arrived.set()
                    if fake.hold is not None:
                        fake.hold.wait(10)
                with fake._lock:
                    status, answer, extra = fake._answer(call)
                call.status = status
                out = answer if isinstance(answer, bytes) else json.dumps(answer).encode()
                self.send_response(status)
                if "Content-Type" not in extra:
                    self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(out)))
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(out)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _serve

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base signature)
                pass

        return Handler
