"""Feishu open API calls through lark-oapi, off the event loop, one attempt each, on one connection pool.

lark-oapi fetches the tenant token and sends requests with blocking ``requests``,
so every call runs in a worker thread. lark-oapi 1.7.5 sends each request with
``requests.request`` (its async ``a*`` methods open an ``httpx.AsyncClient`` per call
and fetch the token with blocking ``requests`` all the same): a new TCP connection and
TLS handshake per call, and it has no setting for a session. So the ``requests`` its
transport module uses is replaced, once, by a stand-in whose ``request`` goes through the
keep-alive ``requests.Session`` of the sender making the call (a context variable set for
that call only) and through requests' one-off session otherwise, exactly as before. Each
sender owns its session for its life (``close``). CardKit (streaming cards) goes through
the SDK's typed ``client.cardkit.v1`` calls on the same pool.

Each call is made once; the core's delivery retries a transient failure through the one
retry policy (``clarigate.gateway.boundary.retry``). A rate limit (HTTP 429 or code 99991400,
and the per-chat limit answered with HTTP 400 code 230020) is transient with the reset the
server names as its ``retry_after``; a 5xx or a network error is transient; a tenant token
Feishu no longer accepts is dropped from lark-oapi's cache and the call made once more with a
new one. Messages carry a ``uuid`` so a retry after a lost response does not post twice
(Feishu dedupes on it for an hour).

Every failure is a ``clarigate.gateway.boundary.port.DeliveryFailed``: permanent for a refusal (a 4xx or a
Feishu ``code`` that no retry changes: a card Feishu will not show, a chat the bot left),
transient for a rate limit, a 5xx or the network. Feishu's code and message are logged and
counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, TypeVar
from urllib.parse import quote

import lark_oapi as lark
import requests
from lark_oapi.api.cardkit.v1.model import Card as CardData
from lark_oapi.api.cardkit.v1.model import (
    ContentCardElementRequest,
    ContentCardElementRequestBody,
    CreateCardRequest,
    CreateCardRequestBody,
    SettingsCardRequest,
    SettingsCardRequestBody,
    UpdateCardRequest,
    UpdateCardRequestBody,
)
from lark_oapi.core.enum import AccessTokenType, HttpMethod
from lark_oapi.core.http import transport as lark_transport
from lark_oapi.core.model import BaseRequest
from lark_oapi.core.token.manager import TokenManager
from requests.adapters import HTTPAdapter

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import PLATFORM_API_ERRORS

from .names import ScopeMissing
from .render import card_json

log = logging.getLogger(__name__)

RATE_LIMITED_CODE = 99991400
#: The limit that comes with HTTP 400: "this operation triggers the frequency limit"
#: (5 messages/s per chat or user, e.g. a long reply split into many cards).
RATE_LIMITED_400_CODES = {230020}
#: The tenant token is invalid or expired; lark-oapi would keep sending its cached one for hours.
TOKEN_REJECTED_CODES = {99991663, 99991664, 99991665, 99991668}
#: "Access denied": the app lacks every scope the API accepts.
SCOPE_MISSING_CODE = 99991672
#: CardKit: the card's operations did not carry a strictly growing ``sequence``.
SEQUENCE_CONFLICT_CODE = 300317
#: CardKit: text streams only while ``streaming_mode`` is on: closed (300309), timed out (200850).
STREAMING_CLOSED_CODES = {300309, 200850}
#: Recalling a message that is already gone: recalled (230011), unknown (230001).
MESSAGE_GONE_CODES = {230011, 230001}
#: CardKit sequences are positive int32s.
INT32_MAX = 2**31 - 1
#: How far a card's sequence jumps after Feishu refused one as not growing (another replica's clock
#: ahead of ours): milliseconds.
SEQUENCE_JUMP = 60_000
#: Connections kept open per host: as many as calls can run at once (asyncio's default thread pool).
POOL_SIZE = 32
_JSON = {"Content-Type": "application/json; charset=utf-8"}

_T = TypeVar("_T")

# --- one keep-alive connection pool per sender -------------------------------------------------

#: The session of the sender whose call runs in this thread (set around each call).
_SESSION: ContextVar[requests.Session | None] = ContextVar("feishu_session", default=None)


class _PooledRequests:
    """What lark-oapi's transport module sees as ``requests``: ``request`` goes through the session
    of the sender making the call, else through requests' one-off session as lark-oapi does."""

    def __getattr__(self, name: str) -> Any:
        return getattr(requests, name)

    @staticmethod
    def request(method: str, url: str, **kwargs: Any) -> requests.Response:
        session = _SESSION.get()
        if session is None:
            return requests.request(method, url, **kwargs)
        return session.request(method, url, **kwargs)


def _install_pool() -> bool:
    """Put ``_PooledRequests`` in lark-oapi's transport (once); False when its transport changed."""
    current = getattr(lark_transport, "requests", None)
    if isinstance(current, _PooledRequests):
        return True
    if current is not requests:
        log.warning("feishu: lark-oapi's transport changed; API calls open a connection each")
        return False
    lark_transport.requests = _PooledRequests()  # type: ignore[assignment]
    return True


POOLED = _install_pool()


def new_session(pool_size: int = POOL_SIZE) -> requests.Session:
    """A keep-alive session holding up to ``pool_size`` connections per host."""
    session = requests.Session()
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=pool_size)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


class FeishuApiError(DeliveryFailed):
    """A Feishu API call that failed: refused (``permanent``), or worth another attempt later."""

    def __init__(
        self,
        message: str,
        status: int | None = None,
        code: int | None = None,
        *,
        permanent: bool = True,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(
            message,
            permanent=permanent,
            retry_after=retry_after,
            code=str(code) if code is not None else None,
        )
        self.status = status
        self.feishu_code = code


class _TokenRejected(Exception):
    """Feishu no longer accepts lark-oapi's cached tenant token (the call is made again with a new one)."""


def build_client(settings: FeishuSettings, timeout: float = 10.0) -> lark.Client:
    """The lark-oapi client for these credentials, on ``settings.domain`` (Feishu, Lark or a test server)."""
    secret = settings.app_secret.get_secret_value() if settings.app_secret else ""
    return (
        lark.Client.builder()
        .app_id(settings.app_id or "")
        .app_secret(secret)
        .domain(settings.domain.rstrip("/"))
        .timeout(timeout)
        .log_level(lark.LogLevel.WARNING)
        .build()
    )


def entity_content(card_id: str) -> str:
    """The ``content`` of an interactive message showing the card entity ``card_id``."""
    return json.dumps({"type": "card", "data": {"card_id": card_id}})


class CardSequences:
    """The ``sequence`` of each card entity's next operation: strictly growing, as CardKit demands.

    Derived from the time: milliseconds since the card was made (an entity lives 14 days,
    int32 milliseconds 24), so another replica continuing a card after a hand-over picks a
    larger one with nothing but the card's creation time; in this process also larger than the
    last one given. A refusal as not growing (clocks apart) makes the card's sequence jump.
    """

    def __init__(self, limit: int = 2000) -> None:
        self.limit = limit
        self._last: OrderedDict[str, int] = OrderedDict()
        self._lock = threading.Lock()  # taken in the worker threads that make the calls

    def next(self, card_id: str, created_ms: int) -> int:
        """The sequence for the next operation on ``card_id`` (made at ``created_ms``, epoch ms)."""
        derived = int(time.time() * 1000) - created_ms + 1
        with self._lock:
            sequence = min(max(self._last.get(card_id, 0) + 1, derived, 1), INT32_MAX)
            self._last[card_id] = sequence
            self._last.move_to_end(card_id)
            while len(self._last) > self.limit:
                self._last.popitem(last=False)
        return sequence

    def jump(self, card_id: str) -> None:
        """After a sequence refused as not growing: the next one is ``SEQUENCE_JUMP`` further."""
        with self._lock:
            self._last[card_id] = min(self._last.get(card_id, 0) + SEQUENCE_JUMP, INT32_MAX - 1)


class FeishuSender:
    """The open API calls the adapter makes: messages (post, reply, update, recall), who am I,
    files, and CardKit's streaming cards. One keep-alive connection pool for all of them."""

    def __init__(
        self,
        client: lark.Client,
        session: requests.Session | None = None,
    ) -> None:
        self.client = client
        self.session = session or new_session()
        self.sequences = CardSequences()

    def close(self) -> None:
        """Close the pool's connections (the adapter's ``stop``)."""
        self.session.close()

    def _pooled(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run ``function`` (in a worker thread) with lark-oapi's requests going through our pool."""
        token = _SESSION.set(self.session)
        try:
            return function(*args)
        finally:
            _SESSION.reset(token)

    async def post_card(self, chat_id: str, card: dict[str, Any], key: str | None = None) -> str:
        """Post a card in a chat; returns the new message id.

        ``key`` is Feishu's ``uuid``: one message per key within an hour, so a send repeated
        (after a crash, from another replica) is not shown twice. A fresh one when not given.
        """
        return await self.post_message(chat_id, card_json(card), key)

    async def post_message(self, chat_id: str, content: str, key: str | None = None) -> str:
        """Post an interactive message (a card's JSON, or ``entity_content``); returns its id."""
        body = {
            "receive_id": chat_id,
            "msg_type": "interactive",
            "content": content,
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call(
            HttpMethod.POST,
            "/open-apis/im/v1/messages",
            body,
            queries=[("receive_id_type", "chat_id")],
        )
        return str(data.get("message_id") or "")

    async def reply_card(
        self, message_id: str, card: dict[str, Any], in_thread: bool, key: str | None = None
    ) -> str:
        """Reply to a message with a card (inside its thread when ``in_thread``); returns the new id."""
        return await self.reply_message(message_id, card_json(card), in_thread, key)

    async def reply_message(
        self,
        message_id: str,
        content: str,
        in_thread: bool,
        key: str | None = None,
    ) -> str:
        """Reply with an interactive message (``content`` as in ``post_message``); returns its id."""
        body = {
            "msg_type": "interactive",
            "content": content,
            "reply_in_thread": in_thread,
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call(HttpMethod.POST, f"/open-apis/im/v1/messages/{message_id}/reply", body)
        return str(data.get("message_id") or "")

    async def update_card(self, message_id: str, card: dict[str, Any]) -> None:
        """Replace the card of a message the bot sent."""
        body = {"content": card_json(card)}
        await self.call(HttpMethod.PATCH, f"/open-apis/im/v1/messages/{message_id}", body)

    async def delete_message(self, message_id: str) -> None:
        """Recall a message the bot sent; one already gone counts as recalled."""
        try:
            await self.call(
                HttpMethod.DELETE, f"/open-apis/im/v1/messages/{quote(message_id, safe='')}", None
            )
        except FeishuApiError as exc:
            if exc.feishu_code not in MESSAGE_GONE_CODES:
                raise

    # --- CardKit: card entities, streamed text ---------------------------------------------------

    async def create_card_entity(self, card: dict[str, Any]) -> str:
        """Make a card entity from card JSON 2.0 (``POST /cardkit/v1/cards``); returns its card_id."""
        body = CreateCardRequestBody.builder().type("card_json").data(card_json(card)).build()

        def send() -> Any:
            return self.client.cardkit.v1.card.create(CreateCardRequest.builder().request_body(body).build())

        data = await self._call("POST /open-apis/cardkit/v1/cards", send)
        card_id = str(data.get("card_id") or "")
        if not card_id:
            raise FeishuApiError(
                "POST /open-apis/cardkit/v1/cards: no card_id in the answer", permanent=False
            )
        return card_id

    async def stream_text(self, card_id: str, created_ms: int, element_id: str, content: str) -> None:
        """Set a text element's whole content; Feishu types out what was added to the old text."""

        def send(sequence: int) -> Any:
            body = ContentCardElementRequestBody.builder().content(content).sequence(sequence).build()
            request = (
                ContentCardElementRequest.builder()
                .card_id(card_id)
                .element_id(element_id)
                .request_body(body)
                .build()
            )
            return self.client.cardkit.v1.card_element.content(request)

        label = f"PUT /open-apis/cardkit/v1/cards/{card_id}/elements/{element_id}/content"
        await self._in_sequence(label, card_id, created_ms, send)

    async def card_settings(self, card_id: str, created_ms: int, config: dict[str, Any]) -> None:
        """Change a card entity's ``config`` (e.g. ``{"streaming_mode": False}``)."""

        def send(sequence: int) -> Any:
            settings = json.dumps({"config": config})
            body = SettingsCardRequestBody.builder().settings(settings).sequence(sequence).build()
            request = SettingsCardRequest.builder().card_id(card_id).request_body(body).build()
            return self.client.cardkit.v1.card.settings(request)

        label = f"PATCH /open-apis/cardkit/v1/cards/{card_id}/settings"
        await self._in_sequence(label, card_id, created_ms, send)

    async def update_card_entity(self, card_id: str, created_ms: int, card: dict[str, Any]) -> None:
        """Replace a card entity's whole card (``PUT /cardkit/v1/cards/:card_id``)."""
        data = CardData.builder().type("card_json").data(card_json(card)).build()

        def send(sequence: int) -> Any:
            body = UpdateCardRequestBody.builder().card(data).sequence(sequence).build()
            request = UpdateCardRequest.builder().card_id(card_id).request_body(body).build()
            return self.client.cardkit.v1.card.update(request)

        label = f"PUT /open-apis/cardkit/v1/cards/{card_id}"
        await self._in_sequence(label, card_id, created_ms, send)

    async def _in_sequence(
        self,
        label: str,
        card_id: str,
        created_ms: int,
        send: Callable[[int], Any],
    ) -> None:
        """A CardKit call on one card: a new sequence each attempt, one jump after a refused one."""
        for jumped in (False, True):
            try:
                await self._call(label, lambda: send(self.sequences.next(card_id, created_ms)))
                return
            except FeishuApiError as exc:
                if exc.feishu_code != SEQUENCE_CONFLICT_CODE or jumped:
                    raise
                self.sequences.jump(card_id)

    async def bot_open_id(self) -> str | None:
        """The bot's own open_id (to tell mentions of the bot from others), None if unknown."""
        raw = await self.call(HttpMethod.GET, "/open-apis/bot/v3/info", None, whole=True)
        bot = raw.get("bot")
        return str(bot["open_id"]) if isinstance(bot, dict) and bot.get("open_id") else None

    async def user_name(self, open_id: str) -> str | None:
        """A person's name (scope ``contact:user.base:readonly``); None when Feishu will not say.

        Raises ``ScopeMissing`` when the app lacks the scope, so callers stop asking.
        """
        try:
            data = await self.call(
                HttpMethod.GET,
                f"/open-apis/contact/v3/users/{quote(open_id, safe='')}",
                None,
                queries=[("user_id_type", "open_id")],
            )
        except FeishuApiError as exc:
            if exc.feishu_code == SCOPE_MISSING_CODE:
                raise ScopeMissing(str(exc)) from exc
            return None  # outside the app's contact range, left the company, …
        user = data.get("user")
        name = str(user.get("name") or "").strip() if isinstance(user, dict) else ""
        return name or None

    async def fetch_resource(self, message_id: str, resource: str, key: str, max_bytes: int) -> bytes | None:
        """A file or image of a message (``GET …/messages/{id}/resources/{key}``), at most ``max_bytes``.

        None when Feishu will not give it (stickers, files in merged forwards, more than
        100 MB) or it is bigger than ``max_bytes``: the body is streamed and dropped past
        the cap, never held whole.
        """
        return await asyncio.to_thread(self._pooled, self._download, message_id, resource, key, max_bytes)

    def _download(self, message_id: str, resource: str, key: str, max_bytes: int) -> bytes | None:
        config = self.client._config
        uri = f"/open-apis/im/v1/messages/{quote(message_id, safe='')}/resources/{quote(key, safe='')}"
        for attempt in range(2):  # once more with a fresh tenant token if Feishu no longer takes ours
            token = TokenManager.get_self_tenant_token(config)
            try:
                with self.session.get(
                    config.domain + uri,
                    params={"type": resource},
                    headers={"Authorization": f"Bearer {token}"},
                    stream=True,
                    timeout=config.timeout,
                ) as response:
                    if response.status_code == 200:
                        body = _capped(response, max_bytes)
                        log_platform_call(
                            "feishu", f"GET {uri}", "ok" if body is not None else "over the size cap"
                        )
                        return body
                    answer = _json(response.content)
            except requests.RequestException as exc:
                PLATFORM_API_ERRORS.labels("feishu", "network").inc()
                log.warning("feishu GET %s failed: %s", uri, exc)
                return None
            code = answer.get("code")
            if code in TOKEN_REJECTED_CODES and attempt == 0:
                self.forget_token()
                continue
            kind = "server_error" if response.status_code >= 500 else "client_error"
            PLATFORM_API_ERRORS.labels("feishu", kind).inc()
            log_platform_call("feishu", f"GET {uri}", f"refused: HTTP {response.status_code} code {code}")
            log.warning(
                "feishu GET %s refused: HTTP %s code %s msg %r",
                uri,
                response.status_code,
                code,
                answer.get("msg"),
            )
            return None
        return None

    async def call(
        self,
        method: HttpMethod,
        uri: str,
        body: dict[str, Any] | None,
        queries: list[tuple[str, str]] | None = None,
        whole: bool = False,
    ) -> dict[str, Any]:
        """One API call (no retry: see ``_call``); its ``data`` (or the whole answer with ``whole``)."""

        def send() -> Any:
            request = (
                BaseRequest.builder()
                .http_method(method)
                .uri(uri)
                .token_types({AccessTokenType.TENANT})
                .queries(list(queries or []))
                .headers(dict(_JSON))
                .body(body)
                .build()
            )
            return self.client.request(request)

        return await self._call(f"{method.name} {uri}", send, whole=whole)

    async def _call(self, label: str, send: Callable[[], Any], whole: bool = False) -> dict[str, Any]:
        """Run ``send`` (a lark-oapi call) once, in a worker thread on the pool; returns the answer's
        ``data`` (or the whole answer with ``whole``), or raises ``FeishuApiError`` classified.

        No retry here: the core's delivery (or the caller) tries again through the one retry
        policy. The one exception is a tenant token Feishu stopped accepting: it is dropped and
        the call made once more at once, since the failure was lark-oapi's cached token, not the
        call (a transient failure of that second call is raised like any other).
        """
        for renewed in (False, True):
            try:
                return await self._once(label, send, whole, may_renew=not renewed)
            except _TokenRejected:
                self.forget_token()
        raise AssertionError("unreachable: a renewed token is not renewed again")  # pragma: no cover

    async def _once(
        self, label: str, send: Callable[[], Any], whole: bool, may_renew: bool
    ) -> dict[str, Any]:
        """One call: its ``data``, or a classified ``FeishuApiError`` (``_TokenRejected`` to renew)."""
        status, code, wait = None, None, None
        try:
            response = await asyncio.to_thread(self._pooled, send)
        except requests.RequestException as exc:
            kind, problem = "network", f"network: {exc}"
        except Exception as exc:  # token endpoint trouble surfaces as SDK exceptions or bad JSON
            kind, problem = "server_error", f"token or SDK: {exc}"
        else:
            status, code = response.raw.status_code, response.code
            answer = _json(response.raw.content)
            if status < 400 and code == 0:
                data = answer.get("data") or {}
                log_platform_call("feishu", label, "ok", data.get("message_id"))
                return answer if whole else data
            feishu_msg = response.msg or answer.get("msg") or ""
            problem = f"HTTP {status} code {code}: {feishu_msg}"
            if status == 429 or code == RATE_LIMITED_CODE or code in RATE_LIMITED_400_CODES:
                kind, wait = "rate_limited", _reset_seconds(response.raw.headers)
            elif status >= 500:
                kind = "server_error"
            elif code in TOKEN_REJECTED_CODES and may_renew:
                PLATFORM_API_ERRORS.labels("feishu", "client_error").inc()
                log.warning("feishu %s: tenant token rejected (%s): fetching a new one", label, problem)
                raise _TokenRejected(problem)
            else:
                PLATFORM_API_ERRORS.labels("feishu", "client_error").inc()
                log_platform_call("feishu", label, f"refused: HTTP {status} code {code} msg {feishu_msg!r}")
                log.warning("feishu %s refused: HTTP %s code %s msg %r", label, status, code, feishu_msg)
                raise FeishuApiError(f"{label}: {problem}", status, code)
        PLATFORM_API_ERRORS.labels("feishu", kind).inc()
        log_platform_call("feishu", label, f"failed: {kind}")
        log.warning("feishu %s failed (%s)", label, problem)
        raise FeishuApiError(f"{label}: {problem}", status, code, permanent=False, retry_after=wait)

    def forget_token(self) -> None:
        """Drop lark-oapi's cached tenant token, so the next call fetches a new one."""
        TokenManager.cache.set(f"self_tenant_token:{self.client._config.app_id}", "", 0)


def _json(content: bytes | None) -> dict[str, Any]:
    try:
        value = json.loads(content or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _capped(response: requests.Response, max_bytes: int) -> bytes | None:
    """The body of ``response``, or None as soon as it is known to be over ``max_bytes``."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        return None
    body = bytearray()
    for chunk in response.iter_content(64 * 1024):
        body.extend(chunk)
        if len(body) > max_bytes:
            return None
    return bytes(body)


def _reset_seconds(headers: dict[str, str] | None) -> float | None:
    """Seconds until the rate limit resets, from Feishu's header or ``Retry-After``."""
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    for name in ("x-ogw-ratelimit-reset", "retry-after"):
        try:
            return max(float(lowered[name]), 0.0)
        except (KeyError, ValueError):
            continue
    return None
