"""``doctor`` shows a store's URL as written, a password masked only where there is one."""

from __future__ import annotations

import logging
import os

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES

TRUSTED = "postgresql://postgres@127.0.0.1:5432/test"  # trust auth: a user and no password


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch, tmp_path):
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.postgres
def test_doctor_shows_a_url_without_a_password_without_one(monkeypatch, capsys):
    """It said ``postgresql://postgres:***@…``: the operator looked for a password never set."""
    monkeypatch.setenv("CHECKPOINTER_URL", TRUSTED)
    main(["doctor"])
    out = capsys.readouterr().out
    assert f"checkpointer {TRUSTED}" in out, out
    assert "***" not in out, out
