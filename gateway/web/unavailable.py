"""A webhook the store (Redis) could not serve: 503 with ``Retry-After``, and one line per outage
(``boundary.outage.StoreOutage``, shared with the receive modes that need no public URL).

An outage is not a bug: the platform is told to deliver again (Slack, Feishu and Telegram redeliver
an event answered with any non-2xx status; a click or a slash command shows its usual error and
can be repeated), nothing is logged per request and no traceback is written. The first request
the store fails logs one WARNING; later ones within the outage are logged at DEBUG. Once a
request is answered again and the store answers a ``PING``, one INFO line says it is back.
Requests answered 503 this way are counted in ``clarigate_http_unavailable_total{route}``.

A short blip (a Redis restart or failover, a second or two) is waited out within the ack: a
request's store calls are re-sent for about 2 s, and given up (the outage answer) when
``ACK_STORE_BUDGET_SECONDS`` have passed since the request came in, so a hung Redis or a slow
connect never holds the ack past what the platform waits.
"""

from __future__ import annotations

import json
import logging
from contextlib import AbstractContextManager

from starlette.types import Send

from clarigate.gateway.boundary.outage import Ping, StoreOutage
from clarigate.gateway.store.deadline import store_deadline

log = logging.getLogger(__name__)

#: Seconds a request's store calls may take in all before it is answered 503 (``store.deadline``):
#: Slack and Feishu wait 3 s for a webhook's answer (Slack retries, Feishu re-pushes, after
#: that); Telegram documents no limit and waits longer. 2.5 s leaves half a second for the rest
#: of the request (reading the body, checking the signature, the answer's way back).
ACK_STORE_BUDGET_SECONDS = 2.5

#: Seconds a platform is asked to wait before delivering again (``Retry-After``): a Redis restart
#: or failover takes a second or two, and a platform that keeps its own schedule ignores it.
RETRY_AFTER_SECONDS = 5


async def answer_unavailable(send: Send) -> None:
    """The 503 answer: a small JSON body, like the server's other error answers, and ``Retry-After``."""
    body = json.dumps({"error": "service unavailable: the store is unreachable"}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(RETRY_AFTER_SECONDS).encode()),
    ]
    await send({"type": "http.response.start", "status": 503, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def webhook_outage(ping: Ping | None) -> StoreOutage:
    """The HTTP server's outage: its lines name webhooks answered 503."""
    return StoreOutage(
        ping,
        log=log,
        while_down="webhooks are answered 503",
        when_back="webhooks are answered as usual",
    )


def within_ack() -> AbstractContextManager[None]:
    """A request's store calls, given up ``ACK_STORE_BUDGET_SECONDS`` after it came in."""
    return store_deadline(ACK_STORE_BUDGET_SECONDS)
