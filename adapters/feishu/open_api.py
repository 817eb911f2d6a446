"""The Feishu open API client through lark-oapi: the tenant token, one call, its answer classified.

lark-oapi fetches the tenant token and sends requests with blocking ``requests``, so every call
runs in a worker thread, through the keep-alive pool of the client making it (``lark_sdk``).

Each call is made once; the core's delivery retries a transient failure through the one
retry policy (``clarigate.gateway.boundary.retry``). A rate limit (HTTP 429 or code 99991400,
and the per-chat limit answered with HTTP 400 code 230020) is transient with the reset the
server names as its ``retry_after``; a 5xx or a network error is transient; a tenant token
Feishu no longer accepts is dropped from lark-oapi's cache and the call made once more with a
new one.

Every failure is a ``clarigate.gateway.boundary.port.DeliveryFailed``: permanent for a refusal (a 4xx or a
Feishu ``code`` that no retry changes: a card Feishu will not show, a chat the bot left),
transient for a rate limit, a 5xx or the network. Feishu's code and message are logged and
counted. The message operations on top of it are in ``send.py``.

lark-oapi is imported where a client is first built (``build_client``), never when these modules
are: importing it takes seconds of CPU, which the web process does not spend before its port
opens. The adapter builds its client in a worker thread right after the start (``FeishuSender``
with a factory: ``client`` is built on first use, the calls' worker threads included).
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

import requests

from clarigate.adapters.feishu.settings import FeishuSettings
from clarigate.gateway.boundary.port import DeliveryFailed
from clarigate.gateway.runtime.logs import log_platform_call
from clarigate.gateway.runtime.metrics import PLATFORM_API_ERRORS

from .lark_sdk import _SESSION, load_sdk, new_session

if TYPE_CHECKING:
    import lark_oapi as lark

# The logger these lines have always been written under (operators' filters name it).
log = logging.getLogger("clarigate.adapters.feishu.send")

RATE_LIMITED_CODE = 99991400
#: The limit that comes with HTTP 400: "this operation triggers the frequency limit"
#: (5 messages/s per chat or user, e.g. a long reply split into many cards).
RATE_LIMITED_400_CODES = {230020}
#: The chat takes nothing from the bot: 230002 "Bot/User can NOT be out of the chat" (the bot was
#: removed from the group, or the group disbanded): the recipient is gone (``chat_refused``).
RECIPIENT_GONE_CODES = {230002}
#: The tenant token is invalid or expired; lark-oapi would keep sending its cached one for hours.
TOKEN_REJECTED_CODES = {99991663, 99991664, 99991665, 99991668}
#: The tenant-token endpoint (``auth/v3/tenant_access_token/internal``) refusing the app's
#: credentials, which no retry changes: 10003 "invalid param" (an app id or secret that is empty
#: or malformed), 10014 "app secret invalid" (or "app id not exists"). lark-oapi raises them as
#: ``ObtainAccessTokenException`` with Feishu's code.
CREDENTIALS_REFUSED_CODES = {10003, 10014}
#: "Access denied": the app lacks every scope the API accepts.
SCOPE_MISSING_CODE = 99991672
_JSON = {"Content-Type": "application/json; charset=utf-8"}

_T = TypeVar("_T")


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
            chat_refused=permanent and code in RECIPIENT_GONE_CODES,
        )
        self.status = status
        self.feishu_code = code


class _TokenRejected(Exception):
    """Feishu no longer accepts lark-oapi's cached tenant token (the call is made again with a new one)."""


def build_client(settings: FeishuSettings, timeout: float = 10.0) -> lark.Client:
    """The lark-oapi client for these credentials, on ``settings.domain`` (Feishu, Lark or a test server).

    The first one imports lark-oapi (``load_sdk``: seconds of CPU).
    """
    load_sdk()
    import lark_oapi as lark

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


class OpenApiClient:
    """One open API call at a time, on one keep-alive connection pool, classified on failure.

    ``client``: the lark-oapi client, or what builds it (``build_client``) on first use, which
    also makes the pool then (the environment's proxy is read when the pool is made).
    """

    def __init__(
        self, client: lark.Client | Callable[[], lark.Client], session: requests.Session | None = None
    ) -> None:
        self._build = client if callable(client) else None
        self._client = None if callable(client) else client
        self._session = session
        self._lock = threading.Lock()
        if self._client is not None:
            self.load()

    def load(self) -> lark.Client:
        """The lark-oapi client and its pool, made now if they are not yet (a blocking import the
        first time: call it in a worker thread)."""
        with self._lock:
            if self._client is None:
                assert self._build is not None  # noqa: S101 (one of the two is given)
                self._client = self._build()
            if self._session is None:
                self._session = new_session(domain=str(self._client._config.domain or "") or None)
            return self._client

    @property
    def client(self) -> lark.Client:
        """The lark-oapi client (built on first use: see ``load``)."""
        if self._client is not None and self._session is not None:
            return self._client
        return self.load()

    @property
    def session(self) -> requests.Session:
        """The keep-alive pool every call of this client goes through."""
        if self._session is None:
            self.load()
        assert self._session is not None  # noqa: S101 (made by load)
        return self._session

    def close(self) -> None:
        """Close the pool's connections (the adapter's ``stop``); nothing when none was made."""
        if self._session is not None:
            self._session.close()

    def _pooled(self, function: Callable[..., _T], *args: Any) -> _T:
        """Run ``function`` (in a worker thread) with lark-oapi's requests going through our pool."""
        token = _SESSION.set(self.session)
        try:
            return function(*args)
        finally:
            _SESSION.reset(token)

    async def call(
        self,
        method: str,
        uri: str,
        body: dict[str, Any] | None,
        queries: list[tuple[str, str]] | None = None,
        whole: bool = False,
        quiet: bool = False,
    ) -> dict[str, Any]:
        """One API call (``method``: ``GET``, ``POST``…; no retry: see ``_call``); its ``data`` (or the
        whole answer with ``whole``). ``quiet``: a failure gets no WARNING line here (the caller
        writes the one line of it)."""

        def send() -> Any:  # in a worker thread, where lark-oapi may still be loading
            from lark_oapi.core.enum import AccessTokenType, HttpMethod
            from lark_oapi.core.model import BaseRequest

            request = (
                BaseRequest.builder()
                .http_method(HttpMethod[method])
                .uri(uri)
                .token_types({AccessTokenType.TENANT})
                .queries(list(queries or []))
                .headers(dict(_JSON))
                .body(body)
                .build()
            )
            return self.client.request(request)

        return await self._call(f"{method} {uri}", send, whole=whole, quiet=quiet)

    async def _call(
        self, label: str, send: Callable[[], Any], whole: bool = False, quiet: bool = False
    ) -> dict[str, Any]:
        """Run ``send`` (a lark-oapi call) once, in a worker thread on the pool; returns the answer's
        ``data`` (or the whole answer with ``whole``), or raises ``FeishuApiError`` classified.

        No retry here: the core's delivery (or the caller) tries again through the one retry
        policy. The one exception is a tenant token Feishu stopped accepting: it is dropped and
        the call made once more at once, since the failure was lark-oapi's cached token, not the
        call (a transient failure of that second call is raised like any other).
        """
        for renewed in (False, True):
            try:
                return await self._once(label, send, whole, may_renew=not renewed, quiet=quiet)
            except _TokenRejected:
                self.forget_token()
        raise AssertionError("unreachable: a renewed token is not renewed again")  # pragma: no cover

    async def _once(
        self, label: str, send: Callable[[], Any], whole: bool, may_renew: bool, quiet: bool = False
    ) -> dict[str, Any]:
        """One call: its ``data``, or a classified ``FeishuApiError`` (``_TokenRejected`` to renew)."""
        status, code, wait = None, None, None
        warn = log.debug if quiet else log.warning
        try:
            response = await asyncio.to_thread(self._pooled, send)
        except requests.RequestException as exc:
            kind, problem = "network", f"network: {network_reason(exc)}"
        except Exception as exc:  # token endpoint trouble surfaces as SDK exceptions or bad JSON
            code = credentials_refused(exc)
            if code is None:
                kind, problem = "server_error", f"token or SDK: {exc}"
            else:
                PLATFORM_API_ERRORS.labels("feishu", "client_error").inc()
                log_platform_call("feishu", label, f"refused: tenant token code {code}")
                said = getattr(exc, "msg", "")
                problem = f"Feishu refused the app's credentials (tenant token: code {code}, {said})"
                warn("feishu %s: %s", label, problem)
                raise FeishuApiError(f"{label}: {problem}", None, code) from None
        else:
            status, code = response.raw.status_code, response.code
            answer = parse_answer(response.raw.content)
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
                warn("feishu %s refused: HTTP %s code %s msg %r", label, status, code, feishu_msg)
                raise FeishuApiError(f"{label}: {problem}", status, code)
        PLATFORM_API_ERRORS.labels("feishu", kind).inc()
        log_platform_call("feishu", label, f"failed: {kind}")
        warn("feishu %s failed (%s)", label, problem)
        raise FeishuApiError(f"{label}: {problem}", status, code, permanent=False, retry_after=wait)

    def forget_token(self) -> None:
        """Drop lark-oapi's cached tenant token, so the next call fetches a new one."""
        from lark_oapi.core.token.manager import TokenManager

        TokenManager.cache.set(f"self_tenant_token:{self.client._config.app_id}", "", 0)


def credentials_refused(exc: BaseException) -> int | None:
    """Feishu's code when ``exc`` is the tenant-token endpoint refusing the app's credentials
    (lark-oapi's ``ObtainAccessTokenException``: a code of ``CREDENTIALS_REFUSED_CODES``), else None."""
    code = getattr(exc, "code", None)
    return code if isinstance(code, int) and code in CREDENTIALS_REFUSED_CODES else None


def network_reason(exc: requests.RequestException) -> str:
    """What the network did, in a few words and the host (urllib3's nested reprs left out):
    ``Connection refused (open.feishu.cn)``, ``timed out (…)``."""
    host = urlsplit(str(getattr(exc.request, "url", "") or "")).netloc
    reason = "timed out" if isinstance(exc, requests.Timeout) else type(exc).__name__
    cause: BaseException | None = exc
    for _ in range(8):  # requests' error, urllib3's MaxRetryError (its .reason), …, the socket's
        if cause is None:
            break
        if isinstance(cause, OSError) and cause.strerror and not isinstance(exc, requests.Timeout):
            reason = cause.strerror
        following = getattr(cause, "reason", None)
        cause = following if isinstance(following, BaseException) else cause.__cause__ or cause.__context__
    return f"{reason} ({host})" if host else reason


def parse_answer(content: bytes | None) -> dict[str, Any]:
    """An answer's JSON object; empty when the body is not one (a proxy's page, nothing)."""
    try:
        value = json.loads(content or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _reset_seconds(headers: dict[str, str] | None) -> float | None:
    """Seconds until the rate limit resets, from Feishu's header or ``Retry-After``."""
    lowered = {k.lower(): v for k, v in (headers or {}).items()}
    for name in ("x-ogw-ratelimit-reset", "retry-after"):
        try:
            return max(float(lowered[name]), 0.0)
        except (KeyError, ValueError):
            continue
    return None
