"""What ``serve`` checks of the checkpointer's PostgreSQL before it listens (``preflight``'s rules).

Waited for while it is merely unreachable (refused, starting, a name not resolving yet); a wrong
password, a role or a missing database stops the start at once, unless ``create_database`` asks
for a missing database to be made.
"""

from __future__ import annotations

import logging
import re

from clarigate.gateway.runtime.preflight import ExitCode, StartFailure, first_line, wait_until
from clarigate.gateway.runtime.redaction import without_secrets

# The logger these lines have always been written under (``preflight``'s, serve's).
log = logging.getLogger("clarigate.gateway.runtime.serve")


#: PostgreSQL errors that waiting mends (the server is starting, the name not yet resolvable).
_PG_TRANSIENT = (
    "connection refused",
    "timeout expired",
    "could not translate host name",
    "the database system is starting up",
    "the database system is shutting down",
    "no route to host",
    "connection timed out",
)
#: What to do about a checkpointer database that does not exist (serve's words, and doctor's).
MISSING_DATABASE_ADVICE = "create it, set create_database: true, or point CHECKPOINTER_URL elsewhere"
POSTGRES_ADVICE = "Is PostgreSQL running there?"


def missing_database(problem: str) -> bool:
    """True when PostgreSQL refused the connection because its database does not exist."""
    return re.search(r'database "[^"]*" does not exist', problem) is not None


def postgres_refusal(exc: BaseException, where: str) -> str | None:
    """serve's line for a connection PostgreSQL refused for good (a password, a role, a database
    that does not exist), or None when waiting may mend it (refused, starting, a name not yet
    resolving)."""
    if any(marker in str(exc).lower() for marker in _PG_TRANSIENT):
        return None
    text = first_line(exc)
    advice = (
        MISSING_DATABASE_ADVICE
        if missing_database(text)
        else "check the user, password and database in CHECKPOINTER_URL"
    )
    return f"{where}: {text}; {advice}"


async def wait_for_postgres(url: str, budget: float, create: bool = False) -> None:
    """Return once PostgreSQL at ``url`` accepts a connection; stop at once on a permanent refusal.

    ``create`` (the ``create_database`` setting): a database that does not exist is created,
    from the server's ``postgres`` database with the same credentials (which need CREATEDB).
    """
    import psycopg

    where = f"checkpointer: PostgreSQL at {without_secrets(url)}"

    async def connect() -> str | None:
        try:
            connection = await psycopg.AsyncConnection.connect(url, connect_timeout=5)
        except Exception as exc:
            if create and missing_database(first_line(exc)):
                await create_database(url, where)
                return await connect()
            refusal = postgres_refusal(exc, where)
            if refusal is None:
                return first_line(exc)
            raise StartFailure(ExitCode.DATABASE, refusal) from exc
        await connection.close()
        return None

    await wait_until(where, connect, budget, ExitCode.DATABASE, POSTGRES_ADVICE)


async def create_database(url: str, where: str) -> None:
    """``CREATE DATABASE`` the database named in ``url``, connected to the server's ``postgres`` one."""
    import psycopg
    from psycopg import sql
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    name = str(conninfo_to_dict(url).get("dbname") or "")
    try:
        admin = await psycopg.AsyncConnection.connect(
            make_conninfo(url, dbname="postgres"), connect_timeout=5, autocommit=True
        )
    except Exception as exc:
        raise StartFailure(
            ExitCode.DATABASE, f"{where}: cannot create database {name!r}: {first_line(exc)}"
        ) from exc
    try:
        await admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        log.info("checkpointer: created database %r (create_database is on)", name)
    except psycopg.errors.DuplicateDatabase:
        pass  # another replica created it a moment ago
    except Exception as exc:
        raise StartFailure(
            ExitCode.DATABASE,
            f"{where}: cannot create database {name!r}: {first_line(exc)} "
            "(the CHECKPOINTER_URL user needs CREATEDB, or create it beforehand)",
        ) from exc
    finally:
        await admin.close()
