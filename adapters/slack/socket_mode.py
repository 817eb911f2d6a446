"""Socket Mode while the store (Redis) is unreachable: the envelope left unacknowledged, said once.

A listener that fails makes Bolt answer 500; over Socket Mode that leaves the envelope
unacknowledged, so Slack sends the event again, and Bolt's Socket Mode handler writes
"Unsuccessful Bolt execution result (status: 500, …)" at INFO to its client's logger for each
such envelope. An event the store could not take is answered with ``NOT_ACKED`` as the body
(``not_acked``), and that line is left out for it: the outage is said once, by ``StoreOutage``.
Any other failure keeps Bolt's line, beside our own with its traceback.
"""

from __future__ import annotations

import logging

from slack_bolt.response import BoltResponse

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
