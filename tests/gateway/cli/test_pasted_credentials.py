"""Credentials pasted with a newline or a space at an end (a Kubernetes Secret made from a file
with ``--from-file``, a copy from a web page) are the credentials: the platform takes them, and
nothing blames a setting that is right (``TELEGRAM_API_URL``). Slack's signing secret:
tests/adapters/slack/test_signature_refusals.py."""

from __future__ import annotations

import asyncio

import pytest

from clarigate.gateway.cli.main import main
from tests.adapters.telegram.fake_bot_api import FakeBotApi

pytestmark = pytest.mark.usefixtures("clean_environment")  # tests/gateway/conftest.py


@pytest.mark.parametrize("end", ["\n", " ", "\r\n"])
async def test_a_telegram_token_with_a_line_end_is_accepted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], end: str
) -> None:
    api = FakeBotApi()
    await api.start()
    try:
        monkeypatch.setenv("TELEGRAM_BOT_TOKEN", api.token + end)
        monkeypatch.setenv("TELEGRAM_API_URL", api.base_url)
        code = await asyncio.to_thread(main, ["doctor"])
    finally:
        await api.stop()
    out = capsys.readouterr().out
    assert "ok      telegram: credentials accepted" in out.splitlines(), out
    assert code == 0 and "TELEGRAM_API_URL" not in out and "PROBLEM" not in out


def test_a_blank_credential_is_unset_as_an_empty_one(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``TELEGRAM_BOT_TOKEN=" "`` turns Telegram on no more than ``TELEGRAM_BOT_TOKEN=`` does."""
    monkeypatch.setenv("TELEGRAM_BOT_TOKEN", " \n")
    assert main(["doctor"]) == 0
    assert "note    no platform is enabled" in capsys.readouterr().out
