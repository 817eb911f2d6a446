"""A ``CLARIGATE_<SECTION>__<FIELD>`` value pydantic-settings cannot decode (JSON for a list, a
mapping or a section) stops ``serve`` and fails ``doctor`` in one line naming the variable and
what it is read as, not "error parsing value for field "agent" from source "EnvSettingsSource"";
``require_approval`` takes from the environment what it takes in the file (tool names, commas)."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import load_config
from clarigate.gateway.runtime.preflight import ExitCode

from .test_serve_failures import clean_environment  # noqa: F401 (a fixture)


@pytest.mark.parametrize(
    ("name", "value", "said"),
    [
        ("CLARIGATE_AGENT__REQUIRE_APPROVAL", "{deploy: [approve]}", "is read as a JSON object"),
        ("CLARIGATE_AGENT__MCP_SERVERS", "nosuch", "is read as a JSON object"),
        ("CLARIGATE_AGENT__TOOLS", '["pkg.mod:tool"', "is read as a JSON list"),
        ("CLARIGATE_ROUTES", "[{]", "is read as a JSON list"),
        ("CLARIGATE_AGENT", "{model: offline}", "is read as a JSON object"),
        ("CLARIGATE_SLACK__SUGGESTED_PROMPTS", "[x", "is read as a JSON list"),  # a platform's section
    ],
)
def test_an_undecodable_value_names_its_variable(monkeypatch, capsys, name, value, said):
    monkeypatch.setenv(name, value)
    monkeypatch.setenv("LLM_MODEL", "no-such-provider:model")  # a model that would stop the start (6)
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    (line,) = err.splitlines()  # one line, no traceback
    assert f"({name}): {said} and is not valid JSON (" in line, line
    assert "EnvSettingsSource" not in line and "error parsing" not in line
    assert main(["doctor"]) == 1
    problems = [p for p in capsys.readouterr().out.splitlines() if p.startswith("PROBLEM")]
    assert len(problems) == 1 and f"({name}): {said}" in problems[0], problems


def test_require_approval_from_the_environment_takes_tool_names(monkeypatch):
    """A comma-separated list, as ``_approvals`` reads one: each tool with every decision."""
    monkeypatch.setenv("CLARIGATE_AGENT__REQUIRE_APPROVAL", "nosuch, deploy")
    assert load_config().agent.require_approval == {"nosuch": None, "deploy": None}
    monkeypatch.setenv("CLARIGATE_AGENT__REQUIRE_APPROVAL", '{"deploy": ["approve", "reject"]}')
    assert load_config().agent.require_approval == {"deploy": ["approve", "reject"]}


def test_a_tool_name_no_tool_has_is_said_by_doctor(monkeypatch, capsys):
    """``nosuch`` reads, and is then named as a tool the agent does not have."""
    monkeypatch.setenv("CLARIGATE_AGENT__REQUIRE_APPROVAL", "nosuch")
    assert main(["doctor"]) == 1
    problems = [p for p in capsys.readouterr().out.splitlines() if p.startswith("PROBLEM")]
    assert len(problems) == 1 and "require_approval" in problems[0] and "'nosuch'" in problems[0]
