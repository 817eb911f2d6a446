"""$PORT as ``serve`` reads it: a value that is not a port is one line naming PORT (exit 2)."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


@pytest.mark.parametrize("value", ["abc", "80.5", "8080/tcp"])
def test_a_port_variable_that_is_not_a_number_is_one_line_naming_PORT(monkeypatch, capsys, value):  # noqa: N802
    """README: a failed start is one line naming the setting, exit 2; argparse's usage block about
    ``--port`` named a flag the operator never typed."""
    monkeypatch.setenv("PORT", value)
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"clarigate: PORT {value!r} is not a port number (1-65535)"], err


def test_a_bad_port_flag_is_still_argparse_s_usage_error(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "abc")  # the flag, given, is what counts
    with pytest.raises(SystemExit) as exited:
        main(["serve", "--port", "http"])
    assert exited.value.code == 2
    assert "--port: invalid int value: 'http'" in capsys.readouterr().err


def test_a_port_flag_wins_over_the_variable(monkeypatch, capsys):
    monkeypatch.setenv("PORT", "abc")
    assert main(["serve", "--port", "70000"]) == 2  # refused for its range, not for $PORT
    err = capsys.readouterr().err
    assert "--port / PORT 70000 is out of range" in err and "'abc'" not in err, err


@pytest.mark.parametrize("value", ["0", "70000"])
def test_a_port_variable_out_of_range_is_refused_by_serve_and_doctor(monkeypatch, capsys, value):
    """PORT=0 is not "any free port" in a deployment (the platform routes to the port it set):
    refused as 70000 is, exit 2; ``--port 0`` still takes a free port for a local run."""
    monkeypatch.setenv("PORT", value)
    assert main(["doctor"]) == 1  # first: a serve that took PORT=0 would serve on, not return
    out = capsys.readouterr().out
    assert f"PROBLEM port: --port / PORT {value} is out of range: use 1-65535" in out.splitlines(), out

    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [f"clarigate: --port / PORT {value} is out of range: use 1-65535"], err
