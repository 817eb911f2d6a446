"""``clarigate serve --help`` says what ``--role auto`` starts as deploy/README.md does ("The
contract", Processes): with Redis, a web process and ``worker_processes`` worker processes (one per
core by default, at most 4), not "a worker process" while the log then says "2 worker processes"."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main


def test_the_role_help_names_the_worker_processes_setting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "and worker processes (agent runs; worker_processes, by default one per core, at most 4)" in said
    assert "a worker process (" not in said
