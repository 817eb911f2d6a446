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
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.adapter.socket_mode.aiohttp import AsyncSocketModeHandler
from slack_bolt.async_app import AsyncApp
from slack_bolt.response import BoltResponse
from slack_sdk.socket_mode.aiohttp import SocketModeClient
from slack_sdk.socket_mode.request import SocketModeRequest
from slack_sdk.socket_mode.response import SocketModeResponse

from clarigate.gateway.boundary import surrogates

from .receive import shape_problem

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


class CheckedSocketModeHandler(AsyncSocketModeHandler):
    """Bolt's Socket Mode handler, its envelopes cleaned and checked as HTTP bodies are."""

    def __init__(self, app: AsyncApp, app_token: str) -> None:
        super().__init__(app, app_token)
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
