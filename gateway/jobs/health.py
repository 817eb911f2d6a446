"""How a worker loop (reading, claiming, renewing) is doing: one line when it starts failing,
one when it works again."""

from __future__ import annotations

import logging
import time

from clarigate.gateway.runtime import metrics

# the pool's log name: these lines were the pool's before they moved here, and logs are read by it
log = logging.getLogger("clarigate.gateway.jobs.worker")


class LoopHealth:
    """One line when a loop starts failing and one when it works again, not a traceback per try.

    ``failing`` is what ``/healthz`` and the metrics read; the traceback is logged at DEBUG only.
    """

    def __init__(self, what: str, operation: str) -> None:
        self.what = what
        self.operation = operation  # the store-errors metric's label
        self.failing_since: float | None = None
        self.failures = 0

    @property
    def failing(self) -> bool:
        """True from the first failure until the next success."""
        return self.failing_since is not None

    def failed(self, exc: BaseException) -> None:
        """Count a failure; log it when it is the first of a run of failures."""
        self.failures += 1
        metrics.STORE_ERRORS.labels(operation=self.operation).inc()
        if self.failing_since is None:
            self.failing_since = time.monotonic()
            reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            log.warning("%s failed (%s); retrying until it works", self.what, reason)
        log.debug("%s failed", self.what, exc_info=exc)

    def worked(self) -> None:
        """Note a success; log the recovery when it ends a run of failures."""
        if self.failing_since is not None:
            log.info(
                "%s works again after %d failure(s) in %.0f s",
                self.what,
                self.failures,
                time.monotonic() - self.failing_since,
            )
            self.failing_since = None
            self.failures = 0
