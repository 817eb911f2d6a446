"""``clarigate doctor``'s checks of the checkpointer's PostgreSQL, as ``serve`` would meet it:
one direct connection attempt, and whether ``create_database`` could create a missing database."""

from __future__ import annotations

from typing import TYPE_CHECKING

from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.runtime.postgres_preflight import POSTGRES_ADVICE, missing_database, postgres_refusal
from clarigate.gateway.runtime.preflight import first_line, not_reachable

if TYPE_CHECKING:
    from clarigate.gateway.cli.doctor import Report


async def postgres_problem(url: str) -> BaseException | None:
    """Why PostgreSQL at ``url`` cannot be used (one connection attempt), or None when it answers."""
    import psycopg

    try:
        connection = await psycopg.AsyncConnection.connect(url, connect_timeout=5)
    except Exception as exc:
        return exc
    await connection.close()
    return None


async def database_creation_refusal(url: str) -> str | None:
    """Why ``create_database`` could not create the database of ``url`` at start, or None: serve
    connects to the server's ``postgres`` database with the same credentials, which need CREATEDB."""
    import psycopg
    from psycopg.conninfo import make_conninfo

    try:
        admin = await psycopg.AsyncConnection.connect(
            make_conninfo(url, dbname="postgres"), connect_timeout=5
        )
    except Exception as exc:
        return f"cannot connect to the server's postgres database: {first_line(exc)}"
    try:
        cursor = await admin.execute(
            "SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user"
        )
        row = await cursor.fetchone()
    except Exception as exc:
        return first_line(exc) or type(exc).__name__
    finally:
        await admin.close()
    if row is not None and row[0]:
        return None
    return "the CHECKPOINTER_URL user may not create databases (it needs CREATEDB, or create it beforehand)"


async def postgres_unusable(
    config: GatewayConfig, url: str, where: str, failure: BaseException, report: Report, label: str
) -> None:
    """Why the checkpointer's PostgreSQL cannot be used, as serve would see it: refused for good
    or not reachable, in its words; the ``agent:`` section's database that does not exist is
    created at start with ``create_database`` (a note, when its user may do so)."""
    problem = first_line(failure)
    if not (missing_database(problem) and config.create_database):
        what = f"checkpointer: {where}"
        report.problems.append(
            postgres_refusal(failure, what) or not_reachable(what, problem, POSTGRES_ADVICE)
        )
    elif url != config.agent.checkpointer_url:  # a route's own: serve creates only the agent section's
        report.problems.append(
            f"checkpointer: {where}: {problem}; create it (create_database creates only the agent section's)"
        )
    elif (refusal := await database_creation_refusal(url)) is not None:
        report.problems.append(
            f"checkpointer: {where}: {problem}; create_database cannot create it: {refusal}"
        )
    else:
        report.notes.append(
            f"checkpointer: {where}: the database does not exist yet and will be created at start "
            f"(create_database: true); {label} not started here until then"
        )
