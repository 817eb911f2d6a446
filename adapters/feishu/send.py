"""Feishu open API calls through lark-oapi, off the event loop, with retries.

lark-oapi fetches the tenant token and sends requests with blocking ``requests``,
so every call runs in a worker thread. Rate limits (HTTP 429 or code 99991400,
and the per-chat limit answered with HTTP 400 code 230020) wait
for the reset the server names; 5xx and network errors back off exponentially; a
tenant token Feishu no longer accepts is dropped from lark-oapi's cache and
fetched anew; other errors raise at once. Messages carry a ``uuid`` so a retry
after a lost response does not post twice (Feishu dedupes on it for an hour).

Every failure is a ``gateway.port.DeliveryFailed``: permanent for a refusal (a 4xx or a
Feishu ``code`` that no retry changes: a card Feishu will not show, a chat the bot left),
transient when the retries ran out on a rate limit, a 5xx or the network. Feishu's code
and message are logged and counted.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from typing import Any
from urllib.parse import quote

import lark_oapi as lark
import requests
from lark_oapi.core.enum import AccessTokenType, HttpMethod
from lark_oapi.core.model import BaseRequest
from lark_oapi.core.token.manager import TokenManager

from gateway.config import FeishuSettings
from gateway.logs import log_platform_call
from gateway.metrics import PLATFORM_API_ERRORS
from gateway.port import DeliveryFailed

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
_JSON = {"Content-Type": "application/json; charset=utf-8"}


class FeishuApiError(DeliveryFailed):
    """A Feishu API call that failed for good: refused (``permanent``), or out of retries."""

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


class FeishuSender:
    """The few open API calls the adapter makes: post, reply, update a card, who am I."""

    def __init__(
        self, client: lark.Client, attempts: int = 5, base_delay: float = 0.5, max_delay: float = 30.0
    ) -> None:
        self.client = client
        self.attempts = attempts
        self.base_delay = base_delay
        self.max_delay = max_delay

    async def post_card(self, chat_id: str, card: dict[str, Any], key: str | None = None) -> str:
        """Post a card in a chat; returns the new message id.

        ``key`` is Feishu's ``uuid``: one message per key within an hour, so a send repeated
        (after a crash, from another replica) is not shown twice. A fresh one when not given.
        """
        body = {
            "receive_id": chat_id,
            "msg_type": "interactive",
            "content": card_json(card),
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call(
            HttpMethod.POST, "/open-apis/im/v1/messages", body, queries=[("receive_id_type", "chat_id")]
        )
        return str(data.get("message_id") or "")

    async def reply_card(
        self, message_id: str, card: dict[str, Any], in_thread: bool, key: str | None = None
    ) -> str:
        """Reply to a message with a card (inside its thread when ``in_thread``); returns the new id."""
        body = {
            "msg_type": "interactive",
            "content": card_json(card),
            "reply_in_thread": in_thread,
            "uuid": key or str(uuid.uuid4()),
        }
        data = await self.call(HttpMethod.POST, f"/open-apis/im/v1/messages/{message_id}/reply", body)
        return str(data.get("message_id") or "")

    async def update_card(self, message_id: str, card: dict[str, Any]) -> None:
        """Replace the card of a message the bot sent."""
        body = {"content": card_json(card)}
        await self.call(HttpMethod.PATCH, f"/open-apis/im/v1/messages/{message_id}", body)

    async def bot_open_id(self, attempts: int = 2) -> str | None:
        """The bot's own open_id (to tell mentions of the bot from others), None if unknown."""
        raw = await self.call(HttpMethod.GET, "/open-apis/bot/v3/info", None, whole=True, attempts=attempts)
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
                attempts=1,
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
        return await asyncio.to_thread(self._download, message_id, resource, key, max_bytes)

    def _download(self, message_id: str, resource: str, key: str, max_bytes: int) -> bytes | None:
        config = self.client._config
        uri = f"/open-apis/im/v1/messages/{quote(message_id, safe='')}/resources/{quote(key, safe='')}"
        for attempt in range(2):  # once more with a fresh tenant token if Feishu no longer takes ours
            token = TokenManager.get_self_tenant_token(config)
            try:
                with requests.get(
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
        attempts: int | None = None,
    ) -> dict[str, Any]:
        """One API call with retries; returns its ``data`` (or the whole answer with ``whole``)."""
        problem, status, code, wait = "no attempt made", None, None, None
        attempts = attempts or self.attempts
        token_renewed = False
        for attempt in range(attempts):
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
            try:
                response = await asyncio.to_thread(self.client.request, request)
            except requests.RequestException as exc:
                kind, problem, wait = "network", f"network: {exc}", None
            except Exception as exc:  # token endpoint trouble surfaces as SDK exceptions or bad JSON
                kind, problem, wait = "server_error", f"token or SDK: {exc}", None
            else:
                status, code = response.raw.status_code, response.code
                answer = _json(response.raw.content)
                if status < 400 and code == 0:
                    data = answer.get("data") or {}
                    log_platform_call("feishu", f"{method.name} {uri}", "ok", data.get("message_id"))
                    return answer if whole else data
                problem = f"HTTP {status} code {code}: {response.msg or answer.get('msg') or ''}"
                if status == 429 or code == RATE_LIMITED_CODE or code in RATE_LIMITED_400_CODES:
                    kind, wait = "rate_limited", _reset_seconds(response.raw.headers)
                elif status >= 500:
                    kind, wait = "server_error", None
                elif code in TOKEN_REJECTED_CODES and not token_renewed:
                    kind, wait, token_renewed = "client_error", 0.0, True
                    self.forget_token()
                else:
                    PLATFORM_API_ERRORS.labels("feishu", "client_error").inc()
                    feishu_msg = response.msg or answer.get("msg") or ""
                    log_platform_call(
                        "feishu",
                        f"{method.name} {uri}",
                        f"refused: HTTP {status} code {code} msg {feishu_msg!r}",
                    )
                    log.warning(
                        "feishu %s %s refused: HTTP %s code %s msg %r",
                        method.name,
                        uri,
                        status,
                        code,
                        feishu_msg,
                    )
                    raise FeishuApiError(f"{method.name} {uri}: {problem}", status, code)
            PLATFORM_API_ERRORS.labels("feishu", kind).inc()
            if attempt + 1 < attempts:
                delay = wait if wait is not None else self.base_delay * 2**attempt
                log.warning("feishu %s %s failed (%s), retrying in %.1fs", method.name, uri, problem, delay)
                await asyncio.sleep(min(delay, self.max_delay))
        log.warning("feishu %s %s failed %d times, last: %s", method.name, uri, attempts, problem)
        raise FeishuApiError(
            f"{method.name} {uri}: gave up after {attempts} attempts: {problem}",
            status,
            code,
            permanent=False,
            retry_after=wait,
        )

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
