"""The store (Redis) unreachable while events arrive: one line per outage, and one when it is back.

An outage is not a bug: whoever receives events (the HTTP server, Slack's Socket Mode, Feishu's
long connection, Telegram's long polling) leaves the event for the platform to deliver again, or
fetches it again itself, and says so once. The first event the store fails logs one WARNING
(without a traceback); later ones within the outage are logged at DEBUG. Once an event is handled
again (and, where the receiver cannot tell, the store answers a ``PING``), one INFO line says it
is back. Anything else a receiver meets is a bug, logged by the receiver with its traceback.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable

from clarigate.gateway.store.connection import unreachable

__all__ = ["PROBE_SECONDS", "Ping", "StoreOutage", "unreachable"]

#: A dependency's check: True when it answers (never raises).
Ping = Callable[[], Awaitable[bool]]

#: While the store is down, an event handled as usual asks it for a ``PING`` at most this often.
PROBE_SECONDS = 1.0


class StoreOutage:
    """Whether one receiver is meeting a store outage, and the lines that say so.

    ``ping``: the store's own check (``Store.ping``, True when it answers; never raises), asked
    before the outage is called over: an event that never touched the store (one nobody wants, a
    URL check) handled as usual proves nothing. None: the receiver calls ``answered`` only after
    the store served an event. ``log``: the receiver's logger; ``while_down`` / ``when_back``:
    what the receiver does meanwhile and after (the end of "the store is unreachable: …").
    """

    def __init__(
        self,
        ping: Ping | None = None,
        *,
        log: logging.Logger,
        while_down: str,
        when_back: str,
    ) -> None:
        self.ping = ping
        self.log = log
        self.while_down = while_down
        self.when_back = when_back
        self.down = False
        self._probing = False
        self._probed_at = 0.0

    def met(self, what: str, error: BaseException) -> bool:
        """True when ``error`` says the store is unreachable (then counted as ``failed``): an
        outage to wait out. False for anything else, which the caller treats as the bug it is."""
        if not unreachable(error):
            return False
        self.failed(what, error)
        return True

    def failed(self, what: str, error: BaseException) -> None:
        """``what`` (an event, a request) met the outage; the outage's first one is logged at WARNING."""
        if self.down:
            self.log.debug("%s: the store is unreachable (%s)", what, type(error).__name__)
            return
        self.down = True
        self.log.warning(
            "the store is unreachable (%s: %s): %s until it is back",
            type(error).__name__,
            error,
            self.while_down,
        )

    async def answered(self) -> None:
        """An event was handled as usual: during an outage, ask the store whether it is back
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
            self.log.info("the store answers again: %s", self.when_back)
