"""When a person wrote a message, for ``InboundMessage.received_at``.

The core takes a message for the typed answer to a question only when it was written after the
question was asked (``gateway.flow.answers.may_type_answer``): "messages written while the agent
was still thinking are more context, never an answer to a question not yet seen". So the time is
the platform's own stamp of the message (Slack's ``ts``, Telegram's ``date``, Feishu's
``create_time``), not when the gateway took it in: a message delivered late (an event retried
after a failed ack, an update redelivered after a failed webhook call or a poller restart) is
still older than a question asked meanwhile.
"""

from __future__ import annotations

import math
import time
from typing import Any


def written_at(stamp: Any) -> float:
    """The unix time (seconds, a number or its text) the platform says a message was written at,
    never later than now: it came after it was written, so a stamp ahead of our clock (the
    platform's clock a little ahead) means now. Now, too, when ``stamp`` is no such time."""
    now = time.time()
    try:
        written = float(stamp)
    except (TypeError, ValueError, OverflowError):
        return now
    return min(written, now) if math.isfinite(written) else now
