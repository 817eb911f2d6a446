"""A webhook URL without its secret is named as the operator set it: the YAML key or the variable."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from clarigate.gateway.runtime.config import ENV_NAMES, load_config, startup_problems


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", "123456:webhook-names")


def test_a_webhook_url_from_the_yaml_file_is_named_by_its_key(tmp_path: Path) -> None:
    """README's Telegram example sets ``telegram: {webhook_url: …}`` in bot.yaml: the refusal
    names that key, not only TELEGRAM_WEBHOOK_URL (a variable the operator never set)."""
    bot = tmp_path / "bot.yaml"
    bot.write_text("telegram:\n  webhook_url: https://bot.example.com/telegram/webhook\n", encoding="utf-8")
    (problem,) = startup_problems(load_config(str(bot)))
    assert problem.startswith("telegram: telegram.webhook_url (TELEGRAM_WEBHOOK_URL) is set without")
    assert "TELEGRAM_WEBHOOK_SECRET" in problem


def test_a_webhook_url_from_the_environment_is_named_by_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.com/telegram/webhook")
    (problem,) = startup_problems(load_config(None))
    assert "(TELEGRAM_WEBHOOK_URL) is set without TELEGRAM_WEBHOOK_SECRET" in problem
