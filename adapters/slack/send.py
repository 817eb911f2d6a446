"""The Slack Web API client: retries that lose nothing, and trouble counted in metrics.

slack_sdk retries only connection errors by default; here a 429 waits for its
``Retry-After`` and a 5xx is retried with exponential backoff, each counted in
``clarigate_platform_api_errors_total``.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.http_retry.builtin_async_handlers import (
    AsyncConnectionErrorRetryHandler,
    AsyncRateLimitErrorRetryHandler,
)
from slack_sdk.http_retry.builtin_interval_calculators import BackoffRetryIntervalCalculator
from slack_sdk.http_retry.request import HttpRequest
from slack_sdk.http_retry.response import HttpResponse
from slack_sdk.http_retry.state import RetryState
from slack_sdk.web.async_client import AsyncWebClient

from gateway.metrics import PLATFORM_API_ERRORS

PLATFORM = "slack"
RATE_LIMIT_RETRIES = 8  # a burst of 429s is waited out, not turned into a lost reply
SERVER_ERROR_RETRIES = 4
NETWORK_RETRIES = 3


def count_api_error(kind: str) -> None:
    """Count one Slack API problem (rate_limited | server_error | client_error | network)."""
    PLATFORM_API_ERRORS.labels(PLATFORM, kind).inc()


class _CountsRetries:
    """Mixin for slack_sdk's retry handlers: counts each retry it grants under ``kind``."""

    kind: str

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        retry: bool = await super()._can_retry_async(  # type: ignore[misc]
            state=state, request=request, response=response, error=error
        )
        if retry:
            count_api_error(self.kind)
        return retry


class CountedRateLimitRetry(_CountsRetries, AsyncRateLimitErrorRetryHandler):
    """slack_sdk's 429 handler (sleeps ``Retry-After``), counting each 429 it sees."""

    kind = "rate_limited"


class ServerErrorRetry(AsyncRetryHandler):
    """Retries any 5xx answer with exponential backoff."""

    async def _can_retry_async(
        self,
        *,
        state: RetryState,
        request: HttpRequest,
        response: HttpResponse | None = None,
        error: Exception | None = None,
    ) -> bool:
        if response is not None and response.status_code >= 500:
            count_api_error("server_error")
            return True
        return False


class CountedConnectionRetry(_CountsRetries, AsyncConnectionErrorRetryHandler):
    """slack_sdk's connection-error handler, counting each network failure."""

    kind = "network"


def build_client(token: str | None, api_url: str, backoff_factor: float = 0.5) -> AsyncWebClient:
    """An ``AsyncWebClient`` at ``api_url`` with rate-limit, server-error and network retries."""
    backoff = BackoffRetryIntervalCalculator(backoff_factor=backoff_factor)
    return AsyncWebClient(
        token=token,
        base_url=api_url,
        retry_handlers=[
            CountedConnectionRetry(max_retry_count=NETWORK_RETRIES, interval_calculator=backoff),
            CountedRateLimitRetry(max_retry_count=RATE_LIMIT_RETRIES),
            ServerErrorRetry(max_retry_count=SERVER_ERROR_RETRIES, interval_calculator=backoff),
        ],
    )


class SlackSender:
    """The Web API calls the adapter makes; errors after retries are counted and raised."""

    def __init__(self, client: AsyncWebClient) -> None:
        self.client = client

    async def _call(self, method: str, **params: Any) -> dict[str, Any]:
        try:
            response = await self.client.api_call(method, json=params)
        except SlackApiError as error:
            status = error.response.status_code
            count_api_error(
                "rate_limited" if status == 429 else "server_error" if status >= 500 else "client_error"
            )
            raise
        except OSError:
            count_api_error("network")
            raise
        return dict(response.data) if isinstance(response.data, dict) else {}

    async def post(
        self,
        channel: str,
        text: str,
        blocks: list[dict[str, Any]] | None = None,
        thread_ts: str | None = None,
    ) -> str:
        """Post a message (in ``thread_ts``'s thread when given); returns its ``ts``."""
        params: dict[str, Any] = {"channel": channel, "text": text, "unfurl_links": False}
        if blocks is not None:
            params["blocks"] = blocks
        if thread_ts:
            params["thread_ts"] = thread_ts
        data = await self._call("chat.postMessage", **params)
        return str(data.get("ts", ""))

    async def update(self, channel: str, ts: str, text: str, blocks: list[dict[str, Any]]) -> None:
        """Replace a message's text and blocks."""
        await self._call("chat.update", channel=channel, ts=ts, text=text, blocks=blocks)

    async def delete(self, channel: str, ts: str) -> None:
        """Delete one of the bot's messages."""
        await self._call("chat.delete", channel=channel, ts=ts)

    async def ephemeral(self, channel: str, user: str, text: str, thread_ts: str | None = None) -> None:
        """Show ``text`` to ``user`` only."""
        params: dict[str, Any] = {"channel": channel, "user": user, "text": text}
        if thread_ts:
            params["thread_ts"] = thread_ts
        await self._call("chat.postEphemeral", **params)

    async def open_view(self, trigger_id: str, view: dict[str, Any]) -> None:
        """Open a modal (the trigger id lives 3 seconds: call at once)."""
        await self._call("views.open", trigger_id=trigger_id, view=view)

    async def whoami(self) -> dict[str, Any]:
        """``auth.test``: the bot's team, user id and bot id; raises on a bad token."""
        return await self._call("auth.test")
