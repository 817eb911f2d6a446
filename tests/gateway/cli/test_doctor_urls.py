"""``doctor`` shows a store's URL as written, a password masked only where there is one."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main

TRUSTED = "postgresql://postgres@127.0.0.1:5432/test"  # trust auth: a user and no password


pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


@pytest.mark.postgres
def test_doctor_shows_a_url_without_a_password_without_one(monkeypatch, capsys):
    """It said ``postgresql://postgres:***@…``: the operator looked for a password never set."""
    monkeypatch.setenv("CHECKPOINTER_URL", TRUSTED)
    main(["doctor"])
    out = capsys.readouterr().out
    assert f"checkpointer {TRUSTED}" in out, out
    assert "***" not in out, out
