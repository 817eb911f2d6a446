"""Which failures of the in-process agent are an outage of what it depends on (the checkpointer).

A checkpointer that cannot be reached now (PostgreSQL restarting, crashed, behind a network cut;
a SQLite file another connection holds locked) is not a failed run: the runner raises
``AgentUnavailable``, so the message is kept and runs once the database is back, as with a
LangGraph server down. What no retry can help (a table or column the database does not have,
a query it refuses, a bug of ours) is raised as it is and ends in an error reply.
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from clarigate.gateway.boundary.errors import AgentUnavailable
from clarigate.gateway.runtime import metrics

log = logging.getLogger(__name__)

#: What SQLite says when another connection holds the file (after the connection's busy timeout).
SQLITE_BUSY = ("database is locked", "database is busy", "database table is locked")
#: How many ``raise … from`` links are followed looking for an outage.
CAUSE_DEPTH = 5


def _causes(failure: BaseException) -> Iterator[BaseException]:
    """``failure`` and what it was raised from (``__cause__``), a few links deep."""
    found: BaseException | None = failure
    for _ in range(CAUSE_DEPTH):
        if found is None:
            return
        yield found
        found = found.__cause__


def _psycopg_unreachable(failure: BaseException) -> bool:
    """PostgreSQL's "cannot talk to the server now": psycopg's ``OperationalError`` (a connection
    refused or lost, the server shutting down, the pool's timeout waiting for a connection)."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover - psycopg comes with the PostgreSQL checkpointer
        return False
    return isinstance(failure, psycopg.OperationalError)


def checkpointer_unreachable(failure: BaseException) -> bool:
    """True when ``failure`` (or what it was raised from) says the checkpointer cannot be reached
    now, so that trying again later may work; False for anything permanent."""
    for found in _causes(failure):
        if isinstance(found, ConnectionError) or _psycopg_unreachable(found):
            return True
        if isinstance(found, sqlite3.OperationalError) and any(s in str(found).lower() for s in SQLITE_BUSY):
            return True
    return False


@contextmanager
def outage_is_unavailable(what: str) -> Iterator[None]:
    """Raise ``AgentUnavailable`` for a checkpointer outage inside the block (counted in
    ``clarigate_checkpointer_errors_total``); anything else goes through unchanged."""
    try:
        yield
    except Exception as exc:
        if not checkpointer_unreachable(exc):
            raise
        metrics.CHECKPOINTER_ERRORS.inc()
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        log.warning("the checkpointer is unreachable during %s (%s)", what, reason[:200])
        raise AgentUnavailable(f"the checkpointer is unreachable: {type(exc).__name__}") from exc
