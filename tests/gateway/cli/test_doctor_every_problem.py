"""``clarigate doctor`` says every problem it can find in one run, each with advice naming the
setting where the operator set it: a model that does not load does not hide the checkpointer's
PostgreSQL, and the model's advice names the YAML key or the variable that gave the model."""

from __future__ import annotations

import pytest

from clarigate.gateway.cli.main import main
from tests.agent.test_checkpoint import _postgres_reachable

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

#: A model no provider serves: the agent's model part does not load.
UNKNOWN_MODEL = "nosuch:model-x"
#: Nothing listens on port 1: PostgreSQL refuses the connection at once.
UNREACHABLE = "postgresql://127.0.0.1:1/x"


def problems(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``clarigate doctor``'s PROBLEM lines (it finds some: exit 1)."""
    assert main(["doctor"]) == 1
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]


def test_an_unknown_model_does_not_hide_an_unreachable_checkpointer(monkeypatch, capsys):
    """Both are said at once: the operator who fixes the model does not find the database next run."""
    monkeypatch.setenv("LLM_MODEL", UNKNOWN_MODEL)
    monkeypatch.setenv("CHECKPOINTER_URL", UNREACHABLE)

    model, database = problems(capsys)

    assert model.startswith(f"PROBLEM agent: model {UNKNOWN_MODEL!r}")
    assert database.startswith(f"PROBLEM checkpointer: {UNREACHABLE}") and "not reachable" in database


@pytest.mark.postgres
@pytest.mark.skipif(not _postgres_reachable(), reason="PostgreSQL at 127.0.0.1:5432 is not reachable")
def test_a_checkpointer_that_answers_is_said_ok_when_the_model_does_not_load(monkeypatch, capsys):
    monkeypatch.setenv("LLM_MODEL", UNKNOWN_MODEL)
    monkeypatch.setenv("CHECKPOINTER_URL", "postgresql://postgres@127.0.0.1:5432/test")

    assert main(["doctor"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert "ok      checkpointer: postgresql://postgres@127.0.0.1:5432/test" in out
    (problem,) = [line for line in out if line.startswith("PROBLEM")]
    assert problem.startswith(f"PROBLEM agent: model {UNKNOWN_MODEL!r}")


def test_the_model_advice_names_the_yaml_key_when_the_file_set_it(tmp_path, monkeypatch, capsys):
    bot = tmp_path / "bot.yaml"
    bot.write_text(f"agent:\n  model: {UNKNOWN_MODEL}\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))

    (problem,) = problems(capsys)

    assert "(check agent.model, its provider package and API key" in problem
    assert "LLM_MODEL" not in problem


@pytest.mark.parametrize("variable", ["LLM_MODEL", "CLARIGATE_AGENT__MODEL"])
def test_the_model_advice_names_the_variable_that_set_it(tmp_path, monkeypatch, capsys, variable):
    """The environment wins over the file: the variable is the setting to change."""
    bot = tmp_path / "bot.yaml"
    bot.write_text("agent:\n  model: offline\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))
    monkeypatch.setenv(variable, UNKNOWN_MODEL)

    (problem,) = problems(capsys)

    assert f"(check {variable}, its provider package and API key" in problem
