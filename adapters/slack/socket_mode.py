"""Socket Mode while the store (Redis) is unreachable: the envelope left unacknowledged, said once.

A listener that fails makes Bolt answer 500; over Socket Mode that leaves the envelope
unacknowledged, so Slack sends the event again, and Bolt's Socket Mode handler writes
"Unsuccessful Bolt execution result (status: 500, …)" at INFO to its client's logger for each
such envelope. An event the store could not take is answered with ``NOT_ACKED`` as the body
(``not_acked``), and that line is left out for it: the outage is said once, by ``StoreOutage``.
Any other failure keeps Bolt's line, beside our own with its traceback.

Envelopes are read as the HTTP endpoint reads a body (``CheckedSocketModeHandler``): each lone
surrogate escaped in the payload's JSON made U+FFFD, and a payload of the wrong shape
(``receive.shape_problem``) acknowledged with one WARNING line, before Bolt dispatches anything:
there is no status to refuse it with, and left unacknowledged Slack would only send it again.

Reconnecting (``GuardedSocketModeClient``): slack_sdk's client asks ``apps.connections.open`` for
a new URL whenever Slack says ``disconnect``, closes the socket or stops answering pings. A refusal
no later try gets past (the app token revoked, wrong, its workspace gone: permanent as
``send.delivery_failed`` classifies it, as at the start) or a ``link_disabled`` disconnect (Socket
Mode turned off for the app) stops it for good, said once at ERROR naming what to fix; the
receiver stays down, so ``/healthz`` fails until a restart (which then stops at the start, naming
SLACK_APP_TOKEN, while it is still refused). Left to itself the client asked again every 10
seconds for good, three library ERROR lines each time. A transient failure (the network, a 5xx,
``ratelimited``) is tried again by the client as before.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from aiohttp import WSMessage
from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from clarigate.gateway.boundary import surrogates

from .receive import shape_problem
from .send import delivery_failed
from .startup import APP_TOKEN, start_failure

log = logging.getLogger(__name__)

#: The body of Bolt's 500 for an event declined during an outage (never sent: only logged by Bolt).
NOT_ACKED = "not acknowledged, the store is unreachable: Slack sends it again"


class _OnceIsEnough(logging.Filter):
    """Leaves out Bolt's line for an envelope answered ``not_acked``."""

    def filter(self, record: logging.LogRecord) -> bool:
        return NOT_ACKED not in record.getMessage()


_ONCE_IS_ENOUGH = _OnceIsEnough()


def not_acked() -> BoltResponse:
    """Bolt's answer for an event the store could not take: a 500, so the envelope stays unacked."""
    return BoltResponse(status=500, body=NOT_ACKED)


def once_is_enough(logger: logging.Logger) -> None:
    """Leave Bolt's line for ``not_acked`` envelopes out of ``logger`` (the Socket Mode client's;
    added once, however often)."""
    logger.addFilter(_ONCE_IS_ENOUGH)


#: The Socket Mode client's ping interval (Bolt's handler's default).
PING_INTERVAL = 10.0
OPEN = "apps.connections.open"
#: Said when Slack turned Socket Mode off for the app (a ``link_disabled`` disconnect).
SOCKET_MODE_OFF = (
    "slack: Slack turned Socket Mode off for the app (disconnect: link_disabled): not reconnecting,"
    " /healthz fails until a restart; turn Socket Mode on again under the app's settings (Socket"
    " Mode), or use HTTP mode (SLACK_SIGNING_SECRET, without SLACK_APP_TOKEN)"
)


class _Refused(Exception):
    """Slack will not let this client reconnect (already said, once)."""


class _RedundantLine(logging.Filter):
    """Leaves out the client's "Failed to retrieve WSS URL" line: the caller's line says the same
    failure (or, for a refusal, ours)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Failed to retrieve WSS URL")


_REDUNDANT_LINE = _RedundantLine()


class GuardedSocketModeClient(SocketModeClient):
    """slack_sdk's Socket Mode client that stops reconnecting once Slack refuses it for good."""

    refused: str | None = None  # the line that said why, once it is refused

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.on_message_listeners.append(self._link_disabled)
        self.logger.addFilter(_REDUNDANT_LINE)

    def stop_reconnecting(self, line: str) -> None:
        """Say ``line`` once and reconnect no more: the receiver stays down (``is_connected``)."""
        if self.refused is None:
            log.error("%s", line)
            self.refused = line
        self.default_auto_reconnect_enabled = self.auto_reconnect_enabled = False

    async def issue_new_wss_url(self) -> str:
        """A new URL, as the client asks for it; a permanent refusal stops reconnecting."""
        if self.refused is not None:
            raise _Refused
        try:
            return await super().issue_new_wss_url()
        except SlackApiError as error:
            failure = delivery_failed(OPEN, error)
            if not failure.permanent:
                raise
            why = start_failure(failure, APP_TOKEN, str(self.web_client.base_url))
            self.stop_reconnecting(f"slack: {why}; not reconnecting, /healthz fails until a restart")
            raise _Refused from None

    async def connect_to_new_endpoint(self, force: bool = False) -> None:
        """Reconnect as the client does, unless Slack refused it (then quietly nothing)."""
        if self.refused is not None:
            return
        try:
            await super().connect_to_new_endpoint(force)
        except _Refused:
            return

    async def _link_disabled(self, message: WSMessage) -> None:
        """Heard before the client reads the envelope (and the close that follows it): a
        ``link_disabled`` disconnect stops reconnecting, before the client would try."""
        if isinstance(message.data, str) and "link_disabled" in message.data:
            envelope = json.loads(message.data)
            if envelope.get("type") == "disconnect" and envelope.get("reason") == "link_disabled":
                self.stop_reconnecting(SOCKET_MODE_OFF)


class CheckedSocketModeHandler(AsyncSocketModeHandler):
    """Bolt's Socket Mode handler, its envelopes cleaned and checked as HTTP bodies are, on a
    client that stops reconnecting once refused (``GuardedSocketModeClient``)."""

    def __init__(self, app: AsyncApp, app_token: str) -> None:
        # Bolt's handler makes a plain client; the same one here, guarded
        self.app, self.app_token = app, app_token
        self.client = GuardedSocketModeClient(
            app_token=app_token, logger=app.logger, web_client=app.client, ping_interval=PING_INTERVAL
        )
        self.client.socket_mode_request_listeners.append(self.handle)  # type: ignore[arg-type]  # as Bolt's
        # the client runs its message listeners, with the raw text, before it reads the request
        self.client.message_listeners.append(_without_lone_surrogates)

    async def handle(self, client: SocketModeClient, req: SocketModeRequest) -> None:  # type: ignore[override]
        """Dispatch the envelope's payload to Bolt, as Bolt's own handler does, unless its shape
        is wrong: then acknowledge it and say so."""
        problem = shape_problem(req.payload)
        if problem is not None:
            log.warning("slack: a %s envelope of the wrong shape, acknowledged: %s", req.type, problem)
            await client.send_socket_mode_response(SocketModeResponse(envelope_id=req.envelope_id))
            return
        await super().handle(client, req)


async def _without_lone_surrogates(client: Any, message: dict[str, Any], raw: str | None) -> None:
    """The envelope's payload with each lone surrogate made U+FFFD (``surrogates``): looked for only
    when the raw text holds a surrogate's escape, as good as never."""
    if raw and surrogates.may_hold_surrogates(raw) and isinstance(message.get("payload"), dict):
        message["payload"] = surrogates.clean(message["payload"])
