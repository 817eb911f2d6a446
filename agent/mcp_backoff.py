"""When an MCP server that did not start is tried again (``Backoff``), and errors in one line
with any URL in them named instead (``root_cause``): the URL may hold the server's key."""

from __future__ import annotations

import logging
import math
import re
import time

from tenacity import RetryCallState, Retrying, wait_exponential

log = logging.getLogger("clarigate.agent.mcp_sessions")  # the sessions' log, as it always was
#: A URL in an error's message (up to a space or a quote).
_URL = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


class Backoff:
    """Whether a server is down (its last start failed) and until when its calls fail at once:
    tenacity's ``wait_exponential`` on the count of starts failed in a row (a ``RetryCallState``'s
    attempts), from the last one's end."""

    def __init__(self, name: str, first_seconds: float, max_seconds: float) -> None:
        self.name = name
        self._wait = wait_exponential(multiplier=first_seconds, max=max_seconds)
        self._failed: RetryCallState | None = None  # the starts failed in a row, while down
        self._due = 0.0  # time.monotonic() from which a start is tried again
        self._why = ""

    @property
    def down(self) -> bool:
        return self._failed is not None

    def failed(self, exc: BaseException) -> ConnectionError:
        """Count a start that failed; the error the call that made it fails with."""
        if self._failed is None:
            self._failed = RetryCallState(Retrying(), None, (), {})
        else:
            self._failed.prepare_for_next_attempt()
        seconds = self._wait(self._failed)
        self._due = time.monotonic() + seconds
        self._why = root_cause(exc.__cause__ or exc, self.name)
        if self._failed.attempt_number == 1:
            log.warning(
                "MCP server %r is down: %s; its tools fail until it is tried again", self.name, self._why
            )
        else:
            log.debug("MCP server %r is still down: %s", self.name, self._why)
        return self._error()

    def refuse_until_due(self) -> None:
        """``ConnectionError`` saying when the server is tried again, while it is down and not due."""
        if self._failed is not None and time.monotonic() < self._due:
            raise self._error()

    def started(self) -> None:
        """A session answered: the server is up, and the next failure waits the first wait again."""
        if self._failed is not None:
            log.warning("MCP server %r is back", self.name)
            self._failed = None

    def _error(self) -> ConnectionError:
        seconds = math.ceil(max(self._due - time.monotonic(), 0.0))
        return ConnectionError(
            f"MCP server {self.name!r} did not start (it will be tried again in {seconds} s): {self._why}"
        )


def root_cause(exc: BaseException, server: str | None = None) -> str:
    """The error at the root of ``exc``, in one line: its type and its message's first line, where
    any URL (the server's, as its HTTP client printed it: it may hold its key) is named instead."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if exc.__cause__ is not None and not str(exc):
        exc = exc.__cause__
    text = str(exc).strip().splitlines()
    named = f"<url of MCP server {server!r}>" if server else "<url>"
    return f"{type(exc).__name__}: {_URL.sub(named, text[0])}" if text else type(exc).__name__
