"""``doctor``'s note for an agent not started because of an MCP server says what is true: the
server cannot be used, its ``mcp:`` PROBLEM line says why (an unset ``${VAR}``, no answer)."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


def test_an_unset_mcp_variable_is_not_said_to_be_a_server_that_does_not_answer(tmp_path, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text(
        "agent:\n"
        "  mcp_servers:\n"
        "    notes:\n"
        "      transport: streamable_http\n"
        "      url: http://127.0.0.1:1/mcp\n"
        "      headers: {Authorization: 'Bearer ${NOTES_TOKEN_UNSET}'}\n",
        encoding="utf-8",
    )

    assert main(["doctor", "--config", str(bot)]) == 1

    lines = capsys.readouterr().out.splitlines()
    assert "PROBLEM mcp: MCP server 'notes': environment variable NOTES_TOKEN_UNSET is not set" in lines
    note = "note    agent: not started, since an MCP server it needs cannot be used"
    assert f"{note} (see its mcp: PROBLEM line)" in lines, lines
    assert not any("does not answer" in line for line in lines), lines
