"""What a new user following README.md meets first: a model id in clarigate's terms, every
broken part of the agent at once, a Telegram webhook URL without its bot, ``admin --help``."""

from __future__ import annotations

import importlib.util

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.preflight import ExitCode

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py

WEBHOOK_URL = "https://bot.example.com/telegram/webhook"


def problems(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """``clarigate doctor``'s PROBLEM lines (it finds some: exit 1)."""
    assert main(["doctor"]) == 1
    return [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]


def serve_error(capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``clarigate serve``'s exit code and its one ERROR line."""
    code = main(["serve", "--host", "127.0.0.1", "--port", "0"])
    (error,) = [line for line in capsys.readouterr().err.splitlines() if " ERROR " in line]
    return code, error


def test_a_model_id_naming_no_provider_is_said_in_clarigates_terms(monkeypatch, capsys):
    """LangChain's words asked for ``model_provider``, which clarigate has no setting for."""
    monkeypatch.setenv("LLM_MODEL", "bogus")
    code, error = serve_error(capsys)
    assert code == ExitCode.MODEL
    (problem,) = problems(capsys)
    for said in (error, problem):
        assert "model_provider" not in said and "Unable to infer" not in said
        assert "'bogus'" in said and "LLM_MODEL" in said
        assert (
            "`offline`, `scripted:PATH`" in said and "`provider:model` such as `openai:gpt-4.1-mini`" in said
        )
        assert "openai, openrouter" in said  # LangChain's providers, kept: they say what is accepted


@pytest.mark.skipif(
    importlib.util.find_spec("langchain_anthropic") is not None, reason="the provider package is installed"
)
def test_doctor_names_every_broken_part_of_the_agent(monkeypatch, tmp_path, capsys):
    """The instructions file, each tool and the provider package: all said, not the first only."""
    bot = tmp_path / "bot.yaml"
    bot.write_text(
        "agent:\n"
        "  model: anthropic:claude-sonnet-4-5\n"
        f"  instructions: {tmp_path / 'absent-instructions.txt'}\n"
        "  tools: ['no_such_package.tools:search', 'json:dumps', 'json:no_such_tool']\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))

    said = problems(capsys)
    assert len(said) == 4, said
    instructions, missing_module, missing_name, model = said
    assert "agent.instructions: cannot read" in instructions and "absent-instructions.txt" in instructions
    assert "tool 'no_such_package.tools:search': cannot import no_such_package" in missing_module
    assert "tool 'json:no_such_tool': json has no 'no_such_tool'" in missing_name
    assert "model 'anthropic:claude-sonnet-4-5'" in model and "langchain-anthropic" in model


@pytest.mark.parametrize("where", ["yaml", "environment"])
def test_a_telegram_webhook_url_without_the_bot_token_is_half_set(monkeypatch, tmp_path, capsys, where):
    """As TELEGRAM_WEBHOOK_SECRET alone is: the operator meant Telegram on, and it is not."""
    if where == "yaml":
        bot = tmp_path / "bot.yaml"
        bot.write_text(f"telegram:\n  webhook_url: {WEBHOOK_URL}\n", encoding="utf-8")
        monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))
    else:
        monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", WEBHOOK_URL)
    expected = (
        "telegram: telegram.webhook_url (TELEGRAM_WEBHOOK_URL) is set "
        "but the platform needs TELEGRAM_BOT_TOKEN"
    )

    assert f"PROBLEM {expected}" in problems(capsys)
    code, error = serve_error(capsys)
    assert code == ExitCode.CONFIG and error.endswith(expected)


def test_admin_help_has_its_description(capsys):
    """Like every other command's ``--help``: a line saying what it does."""
    with pytest.raises(SystemExit):
        main(["admin", "--help"])
    assert "look into and mend the bot's live store (Redis)" in capsys.readouterr().out
