"""A warning that may come in floods, said at most once per interval.

A request refused for its signature is worth a line (it is how a wrong signing secret shows),
but anyone can send thousands: ``RepeatedWarning`` says the first at once, then at most one
line per ``every`` seconds, each saying how many were left unsaid since the one before.
"""

from __future__ import annotations

import logging
import time


def clock() -> float:
    """Now, in seconds (looked up at each warning, so tests can move it on)."""
    return time.monotonic()


class RepeatedWarning:
    """``warning(message, *args)`` logged at most once per ``every`` seconds to ``log``."""

    def __init__(self, log: logging.Logger, every: float = 60.0) -> None:
        self.log = log
        self.every = every
        self._said_at: float | None = None
        self._unsaid = 0

    def warning(self, message: str, *args: object) -> bool:
        """Log it now if the last line is ``every`` seconds old (or none was said); else count it.
        True when it was logged."""
        now = clock()
        if self._said_at is not None and now - self._said_at < self.every:
            self._unsaid += 1
            return False
        unsaid, self._unsaid, self._said_at = self._unsaid, 0, now
        if unsaid:
            message, args = f"{message} (%d more like it since the last such line)", (*args, unsaid)
        self.log.warning(message, *args)
        return True
