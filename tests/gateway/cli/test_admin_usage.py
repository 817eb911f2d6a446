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


def test_clarigate_alone_shows_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    """It said "error: the following arguments are required: command"; now the help, exit 2
    (nothing was done: a usage error's status, so a script that forgot the command fails)."""
    assert main([]) == 2
    said = capsys.readouterr()
    assert said.out == ""
    assert "required" not in said.err and "error" not in said.err
    assert said.err.startswith("usage: clarigate")
    for name, text in (("serve", "run the bot's HTTP server"), ("doctor", "check the configuration")):
        assert any(line.split()[:1] == [name] and text in line for line in said.err.splitlines()), said.err
    assert "admin" in said.err and "chat" in said.err
