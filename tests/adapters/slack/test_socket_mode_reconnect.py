"""Socket Mode's reconnecting: Slack refusing the app token for good (or turning Socket Mode off
for the app) once connected stops the client's reconnecting, said once at ERROR naming what to
fix, the receiver left down for ``/healthz``; a transient failure is tried again as before.

Slack's ``disconnect`` envelope (https://docs.slack.dev/apis/events-api/using-socket-mode/),
then the socket closed, as Slack does; the client's pings made 0.2 s apart so that its monitor
would try again often within the test (10 s in production).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter

from .conftest import slack_settings
from .fake_slack import APP_TOKEN, FakeSlack

OPEN = "apps.connections.open"


@pytest.fixture
async def connected(fake_slack: FakeSlack) -> AsyncIterator[SlackAdapter]:
    """The adapter connected in Socket Mode, its client pinging (and checking) every 0.2 s."""
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    adapter = SlackAdapter(settings, gateway=None)  # type: ignore[arg-type]  # never reaches the core
    await adapter.start()
    await adapter.start_receiving()
    await fake_slack.wait_for_socket(lambda fake: fake.sockets)
    adapter._socket.client.ping_interval = 0.2
    try:
        yield adapter
    finally:
        await adapter.stop()


async def slack_disconnects(fake: FakeSlack, reason: str) -> None:
    """Slack's ``disconnect`` envelope on the open socket, then the socket closed."""
    socket = fake.sockets[-1]
    await socket.send_json({"type": "disconnect", "reason": reason, "debug_info": {"host": "applink-1"}})
    await asyncio.sleep(0.05)
    await socket.close()


def loud(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("refusal", ["invalid_auth", "token_revoked", "account_inactive", "not_authed"])
async def test_an_app_token_refused_on_reconnecting_stops_it_said_once(
    fake_slack: FakeSlack, connected: SlackAdapter, caplog: pytest.LogCaptureFixture, refusal: str
):
    fake_slack.refuse_every(refusal, {OPEN})
    with caplog.at_level(logging.INFO):
        await slack_disconnects(fake_slack, "refresh_requested")
        await asyncio.sleep(2)  # ten rounds of the client's monitor
    assert [c.answer.get("error") for c in fake_slack.attempts(OPEN)] == [None, refusal]  # asked once
    lines = loud(caplog)
    assert len(lines) == 1, [r.getMessage() for r in lines]
    said = lines[0].getMessage()
    assert lines[0].name.startswith("clarigate.adapters.slack") and lines[0].exc_info is None
    assert "SLACK_APP_TOKEN" in said and refusal in said and APP_TOKEN not in said
    assert await connected.connection_up() is False  # /healthz: "receiver down"
    assert len(fake_slack.sockets) == 1


async def test_socket_mode_turned_off_for_the_app_stops_reconnecting_said_once(
    fake_slack: FakeSlack, connected: SlackAdapter, caplog: pytest.LogCaptureFixture
):
    with caplog.at_level(logging.INFO):
        await slack_disconnects(fake_slack, "link_disabled")
        await asyncio.sleep(2)
    assert len(fake_slack.attempts(OPEN)) == 1  # the start's only
    lines = loud(caplog)
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert "link_disabled" in lines[0].getMessage() and "Socket Mode" in lines[0].getMessage()
    assert await connected.connection_up() is False
    assert len(fake_slack.sockets) == 1


async def test_a_transient_failure_on_reconnecting_is_tried_again(
    fake_slack: FakeSlack, connected: SlackAdapter, caplog: pytest.LogCaptureFixture
):
    fake_slack.refuse_next("internal_error", {OPEN})  # then Slack answers
    with caplog.at_level(logging.INFO):
        await slack_disconnects(fake_slack, "refresh_requested")
        await fake_slack.wait_for_socket(lambda fake: len(fake.sockets) == 2)
    assert [c.answer.get("error") for c in fake_slack.attempts(OPEN)] == [None, "internal_error", None]
    async with asyncio.timeout(5):
        while not await connected.connection_up():  # noqa: ASYNC110
            await asyncio.sleep(0.05)
    assert not any("SLACK_APP_TOKEN" in r.getMessage() for r in caplog.records)
