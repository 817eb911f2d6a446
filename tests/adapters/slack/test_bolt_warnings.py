"""Bolt's start-up warnings: none about a token set as documented, the others as Bolt logs them."""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest
from slack_bolt.logger.messages import warning_client_prioritized_and_token_skipped, warning_token_skipped
from slack_sdk.web.async_client import AsyncWebClient

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.slack.bolt_app import BotIdentity, build_bolt_app
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

from .conftest import slack_settings
from .fake_slack import BOT_TOKEN, FakeSlack

BOLT_LOGGER = "slack_bolt.AsyncApp"


def _bolt_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name.startswith("slack_bolt")]


async def test_no_bolt_warning_when_the_bot_token_is_set_as_documented(
    fake_slack: FakeSlack, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """With SLACK_BOT_TOKEN in the environment Bolt reads it itself, then warned on every start
    "As you gave `client` as well, `token` will be unused.": about nothing, the client has it."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    gateway = Gateway(GatewayConfig(), MemoryStore(f"bolt-warnings-{uuid.uuid4().hex[:8]}"), ScriptedRunner())
    with caplog.at_level(logging.WARNING):
        adapter = SlackAdapter(slack_settings(fake_slack), gateway)
    assert _bolt_lines(caplog) == []
    assert adapter.app.client is adapter.client  # Bolt works with the adapter's client as before


def test_bolts_other_warnings_are_still_logged(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only the lines about the token are left out, and only while the app is built."""
    monkeypatch.setenv("SLACK_BOT_TOKEN", BOT_TOKEN)
    monkeypatch.setenv("HOME", str(tmp_path))  # Bolt's file-based OAuth stores, should it write them
    monkeypatch.setenv("SLACK_CLIENT_ID", "1.2")  # Bolt turns OAuth on by itself: a line of its own
    monkeypatch.setenv("SLACK_CLIENT_SECRET", "oauth-secret")
    unused_token = [warning_token_skipped(), warning_client_prioritized_and_token_skipped()]
    # Bolt's tree at INFO too: an earlier test's log set-up may have held it at WARNING
    with caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, logger="slack_bolt"):
        build_bolt_app(AsyncWebClient(token=BOT_TOKEN), "signing-secret", BotIdentity(BOT_TOKEN))
        for line in unused_token:
            logging.getLogger(BOLT_LOGGER).warning(line)
    lines = _bolt_lines(caplog)
    built, after_build = lines[:-2], lines[-2:]
    assert any("SLACK_CLIENT_ID" in line for line in built)  # Bolt's own line about OAuth, kept
    assert not set(built) & set(unused_token) and after_build == unused_token
