"""A fake Feishu open API on 127.0.0.1: tenant token, message create/reply/patch/delete, resources,
bot info, CardKit card entities (``fake_cardkit``: create, stream an element's text, settings,
full update, add elements), and cards one member alone sees (``fake_ephemeral``).

It records every call (with the time it arrived and the TCP connection it came on) and can
be told to answer the next calls with 429 or 500, so the real lark-oapi client is exercised
over real HTTP/1.1 with keep-alive, as Feishu serves it. Like Feishu, it refuses a card
message whose request body is over 30 KB or whose card breaks the JSON 2.0 component rules
(``card_schema.py``); CardKit answers as ``fake_cardkit`` says.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .card_schema import CardRuleBroken, check_card
from .fake_cardkit import CARD_BODY_LIMIT, Entity, FakeCardKit, cardkit_kind
from .fake_ephemeral import EphemeralCard, FakeEphemeral
from .fake_uploads import UPLOAD_MESSAGES, Uploads

__all__ = ["CARD_BODY_LIMIT", "BOT_OPEN_ID", "Call", "Entity", "FakeOpenApi", "cardkit_kind"]

TOKEN = "t-fake-tenant-token"
BOT_OPEN_ID = "ou_bot"


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
    at: float = 0.0  # time.monotonic() when the request arrived
    peer: tuple[str, int] = ("", 0)  # the client's address: one per TCP connection
    code: int | None = None  # the Feishu code the fake answered with
    raw: bytes = b""  # the request body as it came (multipart uploads)

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


class FakeOpenApi(FakeEphemeral, FakeCardKit):
    """Start with ``start()``; ``url`` is the domain to give the adapter."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.failures: list[Failure] = []
        self.cards: dict[str, dict[str, Any]] = {}  # message id -> the card it shows now, in posting order
        self.hold: threading.Event | None = None  # when set up, message calls wait until it is set
        self.message_arrived = threading.Event()  # set by every message call (before ``hold``)
        self.contact_hold: threading.Event | None = None  # when set up, name lookups wait until it is set
        self.info_hold: threading.Event | None = None  # when set up, "who am I" waits until it is set
        self.token = TOKEN  # the tenant token that is valid now (``revoke_token`` changes it)
        #: The app's App Secret as Feishu knows it (None: any is taken); a token asked for with
        #: another is refused as Feishu refuses it (code 10014, "app secret invalid").
        self.app_secret: str | None = None
        #: People's names by open_id, readable only when the app has the contact scope.
        self.names: dict[str, str] = {}
        self.contact_scope = False
        #: Files people sent, by (message id, key): (type the API wants, bytes, content type).
        self.resources: dict[tuple[str, str], tuple[str, bytes, str]] = {}
        #: Feishu sends at most one message per ``uuid`` within an hour: a repeat gets the first one.
        self.by_uuid: dict[str, str] = {}
        #: CardKit card entities by card_id.
        self.entities: dict[str, Entity] = {}
        self.refuse_cardkit = False
        #: Text messages (``msg_type`` "text") by message id: what each shows.
        self.texts: dict[str, str] = {}
        #: Refuse every card message with 230099, as Feishu does for content it cannot make a card of.
        self.refuse_cards = False
        #: A group that takes no thread replies: a reply with ``reply_in_thread`` is refused (230071).
        self.refuse_thread_replies = False
        self.deleted: set[str] = set()  # messages recalled (DELETE)
        #: Path parts of calls whose answer is lost: the next such call taken (a message stored) has
        #: its connection closed unanswered, as when the network drops Feishu's answer.
        self.answers_lost: list[str] = []
        #: The chats the bot is in, by chat_id: their ``chat_mode`` ("group", "topic", "p2p") as
        #: ``GET /open-apis/im/v1/chats/:chat_id`` tells it.
        self.chats: dict[str, str] = {"oc_p2p": "p2p", "oc_group": "group", "oc_other": "group"}
        self.uploads = Uploads()  # images and files uploaded, and the messages showing them
        self.ephemeral: dict[str, EphemeralCard] = {}  # cards one member alone sees (``fake_ephemeral``)
        #: TCP connections the fake accepted and saw closed, by the client's address.
        self.connections_opened: list[tuple[str, int]] = []
        self.connections_closed: list[tuple[str, int]] = []
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
        path_part: str = "/im/v1/",
    ) -> None:
        """The next ``times`` calls to a path containing ``path_part`` (message calls unless told;
        optionally only ``method``) fail with ``status``/``code``."""
        for _ in range(times):
            self.failures.append(
                Failure(status, {"code": code, "msg": "scripted failure"}, headers or {}, method, path_part)
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
        """The cards the chat shows now (updates applied, recalled messages gone), oldest first."""
        return list(self.cards.values())

    def peers(self, calls: list[Call] | None = None) -> set[tuple[str, int]]:
        """The TCP connections ``calls`` (all calls when None) came on."""
        return {c.peer for c in (self.calls if calls is None else calls)}

    def _answer(self, call: Call) -> tuple[int, Any, dict[str, str]]:
        method, path, headers = call.method, call.path, call.headers
        if path == "/open-apis/auth/v3/tenant_access_token/internal":
            if self.app_secret is not None and call.body.get("app_secret") != self.app_secret:
                return 200, {"code": 10014, "msg": "app secret invalid"}, {}
            return 200, {"code": 0, "msg": "ok", "tenant_access_token": self.token, "expire": 7200}, {}
        if path == "/callback/ws/endpoint":  # the long connection's bootstrap: no websocket here
            return 200, {"code": 403, "msg": "the fake has no websocket"}, {}
        if headers.get("authorization") != f"Bearer {self.token}":
            return 401, {"code": 99991663, "msg": "invalid tenant access token"}, {}
        for failure in self.failures:
            if failure.path_part in path and failure.method in (None, method):
                self.failures.remove(failure)
                return failure.status, failure.body, failure.headers
        if path in ("/open-apis/im/v1/images", "/open-apis/im/v1/files") and method == "POST":
            return self.uploads.upload(path, headers.get("content-type", ""), call.raw)
        if "/resources/" in path and method == "GET":
            return self._resource(path, call.query)
        if path.startswith("/open-apis/contact/v3/users/"):
            return self._user(path.rsplit("/", 1)[-1], call.query)
        if path == "/open-apis/bot/v3/info":
            return 200, {"code": 0, "msg": "ok", "bot": {"open_id": BOT_OPEN_ID, "app_name": "clarigate"}}, {}
        if path.startswith("/open-apis/im/v1/chats/") and method == "GET":
            return self._chat(path.rsplit("/", 1)[-1])
        if path.startswith("/open-apis/cardkit/v1/cards"):
            return self._cardkit(call)
        if path.startswith("/open-apis/ephemeral/v1/"):
            return self._ephemeral(call)
        if path.startswith("/open-apis/im/v1/messages"):
            if method == "DELETE":
                return self._delete(path.rsplit("/", 1)[-1])
            entity_id = _entity_reference(call.body) if method == "POST" else None
            refusal = self._refusal(call) if entity_id is None else self._entity_refusal(entity_id)
            if refusal is not None:
                return 400, refusal, {}
            if method == "POST":
                if call.body.get("uuid") in self.by_uuid:
                    message_id = self.by_uuid[call.body["uuid"]]
                    return 200, {"code": 0, "msg": "success", "data": {"message_id": message_id}}, {}
                message_id = f"om_{next(self._ids)}"
                if entity_id is not None:
                    self.entities[entity_id].message_id = message_id
                    self.cards[message_id] = copy.deepcopy(self.entities[entity_id].card)
                elif call.body.get("msg_type") == "text":
                    self.texts[message_id] = json.loads(call.body["content"])["text"]
                elif call.body.get("msg_type") in UPLOAD_MESSAGES:
                    self.uploads.show(message_id, call.body)
                else:
                    self.cards[message_id] = call.card()
                if call.body.get("uuid"):
                    self.by_uuid[call.body["uuid"]] = message_id
                return 200, {"code": 0, "msg": "success", "data": {"message_id": message_id}}, {}
            message_id = path.rsplit("/", 1)[-1]
            if message_id in self.deleted:
                return 400, {"code": 230011, "msg": "The message was withdrawn."}, {}
            if message_id not in self.cards:
                return 400, {"code": 230001, "msg": "message not found"}, {}
            self.cards[message_id] = call.card()
            return 200, {"code": 0, "msg": "success", "data": {}}, {}
        return 404, {"code": 404, "msg": "not found"}, {}

    def _delete(self, message_id: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``DELETE /open-apis/im/v1/messages/:message_id``: recall a message the bot sent."""
        if message_id in self.deleted:
            return 400, {"code": 230011, "msg": "The message was withdrawn."}, {}
        if message_id not in self.cards:
            return 400, {"code": 230001, "msg": "message not found"}, {}
        del self.cards[message_id]
        self.deleted.add(message_id)
        return 200, {"code": 0, "msg": "success", "data": {}}, {}

    def _entity_refusal(self, card_id: str) -> dict[str, Any] | None:
        """Feishu's answer to a message that names a card entity it cannot send, else None."""
        entity = self.entities.get(card_id)
        if entity is None:
            return {"code": 200740, "msg": "The card entity does not exist"}
        if entity.message_id is not None:  # "一个卡片实体，仅支持发送一次" (code unconfirmed)
            return {"code": 230099, "msg": "Failed to create card content: card entity already sent"}
        return None

    def _user(self, open_id: str, query: dict[str, list[str]]) -> tuple[int, dict[str, Any], dict[str, str]]:
        if not self.contact_scope:
            return 400, {"code": 99991672, "msg": "Access denied. One of the scopes is required"}, {}
        if query.get("user_id_type") != ["open_id"] or open_id not in self.names:
            return 400, {"code": 41050, "msg": "no user authority error"}, {}
        user = {"open_id": open_id, "name": self.names[open_id]}
        return 200, {"code": 0, "msg": "success", "data": {"user": user}}, {}

    def _chat(self, chat_id: str) -> tuple[int, dict[str, Any], dict[str, str]]:
        """``GET /open-apis/im/v1/chats/:chat_id`` ("获取群信息"): a chat the bot is in, else refused."""
        if chat_id not in self.chats:
            return 400, {"code": 232006, "msg": "Invalid chat_id."}, {}
        mode = self.chats[chat_id]
        data = {
            "chat_id": chat_id,
            "chat_mode": mode,
            "name": "" if mode == "p2p" else chat_id,
        }
        return 200, {"code": 0, "msg": "success", "data": data}, {}

    def _resource(self, path: str, query: dict[str, list[str]]) -> tuple[int, Any, dict[str, str]]:
        """``GET /open-apis/im/v1/messages/:message_id/resources/:file_key?type=image|file``."""
        parts = path.split("/")
        message_id, key = parts[-3], parts[-1]
        found = self.resources.get((message_id, key))
        if found is None or query.get("type") != [found[0]]:
            return 400, {"code": 234003, "msg": "File not in msg."}, {}
        return 200, found[1], {"Content-Type": found[2]}

    def _refusal(self, call: Call) -> dict[str, Any] | None:
        """Feishu's answer to a message it would not send (a card it would not show), else None."""
        if call.method == "POST" and self.refuse_thread_replies and call.body.get("reply_in_thread"):
            return {"code": 230071, "msg": "The chat does not support replying in thread."}
        if call.method == "POST" and call.body.get("msg_type") == "text":
            return _text_refusal(call)
        if call.method == "POST" and call.body.get("msg_type") in UPLOAD_MESSAGES:
            return self.uploads.refusal(call.body)
        if self.refuse_cards:
            return {"code": 230099, "msg": "Failed to create card content: unknown error"}
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
            protocol_version = "HTTP/1.1"  # keep-alive, as Feishu's API gateway serves
            disable_nagle_algorithm = True  # or keep-alive answers wait on delayed ACKs (40 ms each)

            def setup(self) -> None:
                super().setup()
                fake.connections_opened.append(self.client_address)

            def finish(self) -> None:
                super().finish()
                fake.connections_closed.append(self.client_address)

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                headers = {k.lower(): v for k, v in self.headers.items()}
                call = Call(self.command, parts.path, parse_qs(parts.query), headers, body, len(raw), raw=raw)
                call.at, call.peer = time.monotonic(), self.client_address
                fake.calls.append(call)
                if "/im/v1/" in parts.path:
                    fake.message_arrived.set()
                    if fake.hold is not None:
                        fake.hold.wait(10)
                if "/contact/v3/" in parts.path and fake.contact_hold is not None:
                    fake.contact_hold.wait(10)
                if parts.path == "/open-apis/bot/v3/info" and fake.info_hold is not None:
                    fake.info_hold.wait(120)
                with fake._lock:
                    status, answer, extra = fake._answer(call)
                    lost = next((p for p in fake.answers_lost if p in parts.path and status < 400), None)
                    if lost is not None:
                        fake.answers_lost.remove(lost)
                call.status = status
                call.code = answer.get("code") if isinstance(answer, dict) else None
                if lost is not None:
                    self.close_connection = True  # taken, never answered: the client's read fails
                    return
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


def _text_refusal(call: Call) -> dict[str, Any] | None:
    """Feishu's answer to a text message it would not send: content ``{"text": "…"}``, ≤ 150 KB."""
    try:
        text = json.loads(call.body["content"])["text"]
    except (KeyError, TypeError, ValueError):
        return {"code": 230001, "msg": "invalid message content"}
    if not isinstance(text, str) or not text or len(call.body["content"].encode()) > 150 * 1024:
        return {"code": 230001, "msg": "invalid message content"}
    return None


def _entity_reference(body: Any) -> str | None:
    """The card_id of a message whose content is ``{"type": "card", "data": {"card_id": …}}``."""
    try:
        content = json.loads(body["content"])
    except (KeyError, TypeError, ValueError):
        return None
    if isinstance(content, dict) and content.get("type") == "card":
        data = content.get("data")
        return str(data.get("card_id")) if isinstance(data, dict) else ""
    return None
