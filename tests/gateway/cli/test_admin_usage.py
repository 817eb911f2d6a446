"""``clarigate admin`` without a subcommand names the subcommands, not argparse's internal name."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main


def test_admin_alone_names_its_subcommands(capsys: pytest.CaptureFixture[str]) -> None:
    """It said "the following arguments are required: admin_command"."""
    with pytest.raises(SystemExit) as stopped:
        main(["admin"])
    assert stopped.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "admin_command" not in error
    for name in ("threads", "pending", "backlog", "reset-thread", "consumers", "identity"):
        assert name in error, error
