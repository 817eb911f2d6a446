"""Telegram settings Telegram would refuse, or that could never match anyone, stop ``serve`` before
anything starts (exit 2, one line naming the setting) and are ``doctor``'s PROBLEM lines.

Telegram's Bot API (``setWebhook``): the webhook URL is HTTPS, on port 443, 80, 88 or 8443 (a
local Bot API server calls any URL); ``secret_token`` is 1-256 characters of A-Z, a-z, 0-9, _
and -. Its user ids are numbers, chat ids too (negative for groups).
"""

from __future__ import annotations

import logging
import os

import pytest

from clarigate.gateway.cli.main import main
from clarigate.gateway.runtime.config import ENV_NAMES, load_config
from clarigate.gateway.runtime.preflight import ExitCode

TOKEN = "123456:settings-refusals"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path):
    for name in [*ENV_NAMES, *(n for n in os.environ if n.upper().startswith("CLARIGATE_"))]:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CLARIGATE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", TOKEN)
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def refused_by_serve_and_doctor(capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    """``serve``'s one line (exit 2, nothing started) and ``doctor``'s one PROBLEM line."""
    assert main(["serve", "--host", "127.0.0.1", "--port", "0"]) == ExitCode.CONFIG
    err = capsys.readouterr().err
    (line,) = err.splitlines()
    assert line.startswith("clarigate: invalid configuration: telegram (built-in): ")
    assert main(["doctor"]) == 1
    problems = [line for line in capsys.readouterr().out.splitlines() if line.startswith("PROBLEM")]
    assert len(problems) == 1
    return line, problems[0]


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://bot.example.com/telegram/webhook", "must be an https:// URL"),
        ("https://bot.example.com:8080/telegram/webhook", "has port 8080: Telegram calls webhooks on ports"),
        ("bot.example.com/telegram/webhook", "is not a URL"),
    ],
)
def test_a_webhook_url_telegram_would_not_call(monkeypatch, capsys, url, why):
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", url)
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "hook-secret_1")
    line, problem = refused_by_serve_and_doctor(capsys)
    for said in (line, problem):
        assert "telegram.webhook_url (TELEGRAM_WEBHOOK_URL) " + why in said


def test_a_webhook_url_from_the_file_names_no_variable(monkeypatch, capsys, tmp_path):
    """deploy/README.md: a failure names the variable only when the environment set it; a
    ``${TG_URL}`` written in the YAML file (not expanded there) is the file's, not TELEGRAM_WEBHOOK_URL's."""
    bot = tmp_path / "bot.yaml"
    bot.write_text("telegram:\n  webhook_url: ${TG_URL}\n", encoding="utf-8")
    monkeypatch.setenv("CLARIGATE_CONFIG", str(bot))
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "hook-secret_1")
    line, problem = refused_by_serve_and_doctor(capsys)
    for said in (line, problem):
        assert "telegram.webhook_url is not a URL" in said and "TELEGRAM_WEBHOOK_URL" not in said, said


def test_a_webhook_url_telegram_calls_and_a_local_bot_api_servers_own(monkeypatch):
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", "hook-secret_1")
    for url in ("https://bot.example.com/telegram/webhook", "https://bot.example.com:8443/telegram/webhook"):
        monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", url)
        assert load_config().telegram.webhook_url == url
    # a local Bot API server (https://github.com/tdlib/telegram-bot-api) calls plain HTTP on any port
    monkeypatch.setenv("TELEGRAM_API_URL", "http://telegram-bot-api:8081")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "http://bot:8080/telegram/webhook")
    assert load_config().telegram.webhook_url == "http://bot:8080/telegram/webhook"


@pytest.mark.parametrize("secret", ["bad secret!", "x" * 257, "geheimnis-ä"])
def test_a_webhook_secret_telegram_would_refuse(monkeypatch, capsys, secret):
    monkeypatch.setenv("TELEGRAM_WEBHOOK_URL", "https://bot.example.com/telegram/webhook")
    monkeypatch.setenv("TELEGRAM_WEBHOOK_SECRET", secret)
    line, problem = refused_by_serve_and_doctor(capsys)
    for said in (line, problem):
        assert "TELEGRAM_WEBHOOK_SECRET must be 1-256 characters of A-Z, a-z, 0-9, _ and -" in said
        assert secret not in said


@pytest.mark.parametrize(
    ("variable", "value", "why"),
    [
        (
            "CLARIGATE_TELEGRAM__ALLOWED_USERS",
            "abc",
            "allowed_users (CLARIGATE_TELEGRAM__ALLOWED_USERS): Telegram user ids are numbers",
        ),
        ("CLARIGATE_TELEGRAM__ALLOWED_USERS", "123456789,@alice", "entry 2 is not"),
        ("CLARIGATE_TELEGRAM__ALLOWED_CHATS", "-100123,my group,x", "entries 2, 3 are not"),
    ],
)
def test_allowed_ids_that_are_not_numbers(monkeypatch, capsys, variable, value, why):
    monkeypatch.setenv(variable, value)
    line, problem = refused_by_serve_and_doctor(capsys)
    for said in (line, problem):
        assert variable in said and why in said


def test_allowed_ids_as_numbers(monkeypatch):
    monkeypatch.setenv("CLARIGATE_TELEGRAM__ALLOWED_USERS", "123456789, 42")
    monkeypatch.setenv("CLARIGATE_TELEGRAM__ALLOWED_CHATS", "[-1001234567890, 42]")
    section = load_config().telegram
    assert section.allowed_users == ["123456789", "42"]
    assert section.allowed_chats == ["-1001234567890", "42"]
