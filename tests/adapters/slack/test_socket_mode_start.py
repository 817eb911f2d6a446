"""Socket Mode's start: an app token Slack refuses stops the start at once, naming
SLACK_APP_TOKEN (no endless reconnecting); a transient failure of ``apps.connections.open`` is
tried again by the start-up policy, quietly, and the bot connects."""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter, SlackStartError
from clarigate.gateway.boundary import retry

from .conftest import slack_settings
from .fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack

#: what the line says to look at (the serve line says it alike)
APP_TOKEN_IS = "the app-level token (xapp-…, scope connections:write), under Basic Information"

OPEN = "apps.connections.open"


def socket_mode_adapter(fake: FakeSlack, app_token: str) -> SlackAdapter:
    settings = slack_settings(fake, app_token=SecretStr(app_token), signing_secret=None)
    return SlackAdapter(settings, gateway=None)  # type: ignore[arg-type]  # never reaches the core


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The start-up policy's waits, recorded instead of slept."""
    waited: list[float] = []

    async def no_wait(seconds: float) -> None:
        waited.append(seconds)

    monkeypatch.setattr(retry, "pause", no_wait)
    return waited


@pytest.mark.parametrize(
    ("app_token", "refusal"),
    [("xapp-1-A1-FAKE", "invalid_auth"), (BOT_TOKEN, "not_allowed_token_type")],
    ids=["a wrong app token", "the bot token as the app token"],
)
async def test_an_app_token_slack_refuses_stops_the_start_naming_it(
    fake_slack: FakeSlack, waits: list[float], app_token: str, refusal: str
):
    adapter = socket_mode_adapter(fake_slack, app_token)
    await adapter.start()  # the bot token is fine
    try:
        with pytest.raises(SlackStartError) as refused:
            async with asyncio.timeout(20):  # the Socket Mode client alone would try for good
                await adapter.start_receiving()
        said = str(refused.value)
        assert "SLACK_APP_TOKEN" in said and refusal in said and app_token not in said
        assert [c.answer["error"] for c in fake_slack.attempts(OPEN)] == [refusal]  # not asked again
        assert waits == [] and fake_slack.sockets == []
        assert await adapter.check() == [
            f"Slack rejected SLACK_APP_TOKEN ({refusal}): check {APP_TOKEN_IS}"
        ]  # doctor's words
    finally:
        await adapter.stop()


async def test_a_transient_failure_at_start_is_tried_again_by_the_start_up_policy(
    fake_slack: FakeSlack, waits: list[float], caplog: pytest.LogCaptureFixture
):
    adapter = socket_mode_adapter(fake_slack, APP_TOKEN)
    await adapter.start()
    fake_slack.fail_next(1, status=500, methods={OPEN})  # then Slack answers
    try:
        with caplog.at_level(logging.INFO):
            await adapter.start_receiving()
            await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        assert [c.status for c in fake_slack.attempts(OPEN)] == [500, 200]
        assert waits == [0.5]  # the one retry policy's first wait, not the client's 10 s
        assert await adapter.connection_up() is True
        loud = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
        assert loud == [], [r.getMessage() for r in loud]
    finally:
        await adapter.stop()
