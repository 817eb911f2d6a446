"""A webhook the store (Redis) could not serve: 503 with ``Retry-After``, and one line per outage.

An outage is not a bug: the platform is told to deliver again (Slack, Feishu and Telegram redeliver
an event answered with any non-2xx status; a click or a slash command shows its usual error and
can be repeated), nothing is logged per request and no traceback is written. The first request
the store fails logs one WARNING; later ones within the outage are logged at DEBUG. Once a
request is answered again and the store answers a ``PING``, one INFO line says it is back.
Requests answered 503 this way are counted in ``clarigate_http_unavailable_total{route}``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Awaitable, Callable

from starlette.types import Send

from clarigate.gateway.runtime import metrics

log = logging.getLogger(__name__)

#: A dependency's check: True when it answers (never raises).
Ping = Callable[[], Awaitable[bool]]

#: Seconds a platform is asked to wait before delivering again (``Retry-After``): a Redis restart
#: or failover takes a second or two, and a platform that keeps its own schedule ignores it.
RETRY_AFTER_SECONDS = 5
#: While the store is down, a request answered as usual asks it for a ``PING`` at most this often.
PROBE_SECONDS = 1.0


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


class StoreOutage:
    """Whether webhooks are being answered 503 for the store, and the lines that say so.

    ``ping``: the store's own check (``Store.ping``, True when it answers; never raises), asked
    before the outage is called over: a request that never touched the store (an event nobody
    wants, a URL check) answered as usual proves nothing.
    """

    def __init__(self, ping: Ping | None = None) -> None:
        self.ping = ping
        self.down = False
        self._probing = False
        self._probed_at = 0.0

    def failed(self, path: str, route: str, error: BaseException) -> None:
        """Count a request the store could not serve; the outage's first one is logged at WARNING."""
        metrics.http_unavailable(route).inc()
        if self.down:
            log.debug("request to %s answered 503: the store is unreachable (%s)", path, type(error).__name__)
            return
        self.down = True
        log.warning(
            "the store is unreachable (%s: %s): webhooks are answered 503 until it is back",
            type(error).__name__,
            error,
        )

    async def answered(self) -> None:
        """A request was answered as usual: during an outage, ask the store whether it is back
        (one ``PING`` at a time, at most every ``PROBE_SECONDS``) and say so once it is."""
        if not self.down or self._probing or time.monotonic() - self._probed_at < PROBE_SECONDS:
            return
        self._probing = True
        try:
            back = self.ping is None or await self.ping()
        except Exception:  # a check that raises has not answered
            back = False
        finally:
            self._probing = False
            self._probed_at = time.monotonic()
        if back and self.down:
            self.down = False
            log.info("the store answers again: webhooks are answered as usual")
