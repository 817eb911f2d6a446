"""``clarigate doctor`` advises what ``serve`` does: a database serve creates is no problem, and a
platform whose token is set is not told to be set up."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import psycopg
import pytest

from clarigate.gateway.cli.main import main
from tests.agent.test_checkpoint import _postgres_reachable

SERVER = "postgresql://postgres@127.0.0.1:5432"


pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

needs_postgres = pytest.mark.skipif(
    not _postgres_reachable(), reason="PostgreSQL at 127.0.0.1:5432 is not reachable"
)


def _admin(statement: str) -> None:
    with psycopg.connect(f"{SERVER}/postgres", autocommit=True) as admin:
        admin.execute(statement)


@pytest.fixture
def missing_database() -> Iterator[str]:
    """The name of a database that does not exist (dropped afterwards, should anything create it)."""
    name = f"clarigate_doctor_{uuid.uuid4().hex[:10]}"
    yield name
    _admin(f'DROP DATABASE IF EXISTS "{name}"')


@pytest.fixture
def user_without_createdb() -> Iterator[str]:
    """A role that may log in (trust auth) but not create databases."""
    name = f"clarigate_doctor_{uuid.uuid4().hex[:10]}"
    _admin(f'CREATE ROLE "{name}" LOGIN NOCREATEDB')
    yield name
    _admin(f'DROP ROLE IF EXISTS "{name}"')


def _lines(out: str, kind: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(kind)]


@pytest.mark.postgres
@needs_postgres
def test_a_database_create_database_will_make_is_a_note_not_a_problem(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], missing_database: str
) -> None:
    """deploy/k8s/many-bots/*/bot.yaml set ``create_database: true``: serve creates the database at
    its first start, so doctor says so and exits 0."""
    monkeypatch.setenv("CHECKPOINTER_URL", f"{SERVER}/{missing_database}")
    monkeypatch.setenv("CLARIGATE_CREATE_DATABASE", "true")

    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert _lines(out, "PROBLEM") == []
    (note,) = [line for line in _lines(out, "note") if "checkpointer" in line]
    assert missing_database in note and "will be created at start (create_database: true)" in note
    assert "not reachable" not in out


@pytest.mark.postgres
@needs_postgres
def test_a_missing_database_gets_serves_advice_not_not_reachable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], missing_database: str
) -> None:
    """Without ``create_database`` serve stops saying to create it or set the setting: so does doctor."""
    monkeypatch.setenv("CHECKPOINTER_URL", f"{SERVER}/{missing_database}")

    assert main(["doctor"]) == 1
    (problem,) = _lines(capsys.readouterr().out, "PROBLEM")
    assert (
        problem.startswith("PROBLEM checkpointer:")
        and f'database "{missing_database}" does not exist' in problem
    )
    assert problem.endswith("create it, set create_database: true, or point CHECKPOINTER_URL elsewhere")
    assert "not reachable" not in problem


@pytest.mark.postgres
@needs_postgres
def test_create_database_for_a_user_who_may_not_create_one_is_a_problem(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    missing_database: str,
    user_without_createdb: str,
) -> None:
    """serve would stop at start (no CREATEDB): doctor does not promise the database."""
    monkeypatch.setenv(
        "CHECKPOINTER_URL", f"postgresql://{user_without_createdb}@127.0.0.1:5432/{missing_database}"
    )
    monkeypatch.setenv("CLARIGATE_CREATE_DATABASE", "true")

    assert main(["doctor"]) == 1
    (problem,) = _lines(capsys.readouterr().out, "PROBLEM")
    assert "create_database cannot create it" in problem and "CREATEDB" in problem


def test_a_platform_with_half_its_credentials_is_not_told_to_set_them_again(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SLACK_BOT_TOKEN alone: the PROBLEM line names what is missing; no note says to set the
    token that is set ("no platform is enabled: set SLACK_BOT_TOKEN and …")."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", "xoxb-1-half")

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    (problem,) = _lines(out, "PROBLEM")
    assert problem.startswith("PROBLEM slack: SLACK_BOT_TOKEN is set but the platform needs")
    assert [line for line in _lines(out, "note") if "SLACK_BOT_TOKEN" in line] == []
    assert "no platform is enabled" not in out
