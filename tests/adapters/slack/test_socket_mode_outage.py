"""Redis (the store) unreachable while Slack delivers over Socket Mode: the envelope is left
unacknowledged, so Slack sends the event again; one warning line, no traceback; once Redis is
back the event sent again runs once and is answered once.

The real gateway and Bolt's Socket Mode handler on the fake Slack's WebSocket, a real Redis
reached through a proxy that is cut and brought back.
"""

from __future__ import annotations

import asyncio
import logging

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary import outage
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig

from ...conftest import RedisStoreFactory
from ...gateway.tcp_proxy import OutageProxy
from .conftest import slack_settings
from .fake_slack import APP_TOKEN, FakeSlack

ADAPTER_LOG = "clarigate.adapters.slack"


def adapter_lines(caplog: pytest.LogCaptureFixture, level: int) -> list[logging.LogRecord]:
    """What the Slack adapter logged at ``level`` or above (the core's loops say their own)."""
    return [r for r in caplog.records if r.name.startswith(ADAPTER_LOG) and r.levelno >= level]


def bolt_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """Bolt's Socket Mode handler's line for each envelope a listener failed (left unacked)."""
    return [r.getMessage() for r in caplog.records if "Unsuccessful Bolt execution" in r.getMessage()]


def bolt_speaks(caplog: pytest.LogCaptureFixture, adapter: SlackAdapter) -> None:
    """Let the INFO lines of Bolt's Socket Mode handler through, on purpose: its client writes to
    the app's logger, whose level Bolt set from the root's when the app was made, and the quiet
    ``slack_bolt`` tree is held at WARNING on every handler (``QuietLibraries``) until lowered."""
    caplog.set_level(logging.INFO, logger="slack_bolt")
    caplog.set_level(logging.INFO, logger=adapter.app.logger.name)


async def until(condition, timeout: float = 10.0) -> None:  # noqa: ASYNC109
    """Wait until ``condition()`` holds (the handler works on its own task)."""
    async with asyncio.timeout(timeout):
        while not condition():  # noqa: ASYNC110 (lines logged by Bolt's handler task)
            await asyncio.sleep(0.02)


def hello(ts: str, text: str = "hello") -> dict[str, object]:
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D7",
        "user": "U7",
        "text": text,
        "ts": ts,
    }
    return {"type": "event_callback", "team_id": "T0TEAM", "event_id": f"EvSOCKOUT{ts}", "event": event}


async def test_an_event_met_by_a_redis_outage_is_left_unacked_and_runs_once_when_sent_again(
    fake_slack: FakeSlack,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    caplog: pytest.LogCaptureFixture,
):
    runner = ScriptedRunner(lambda turn: TurnOutput(replies=[f"You said: {turn.text}"]))
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    gateway = Gateway(GatewayConfig(streaming="off", progress_after_seconds=60.0), store, runner)
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    adapter = SlackAdapter(settings, gateway)
    gateway.register(adapter)
    bolt_speaks(caplog, adapter)
    await gateway.start(workers=1)
    acked = lambda envelope: any(a.get("envelope_id") == envelope for a in fake_slack.socket_acks)  # noqa: E731
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        await redis_proxy.cut()
        with caplog.at_level(logging.DEBUG):
            # Slack's delivery and its retry while Redis is down
            await fake_slack.push(hello("1.000001"), envelope_id="env-1")
            await until(lambda: adapter_lines(caplog, logging.DEBUG))
            await fake_slack.push(hello("1.000001"), envelope_id="env-2", retry_attempt=1)
            await until(lambda: len(adapter_lines(caplog, logging.DEBUG)) >= 2)
            await asyncio.sleep(0.2)  # an ack would have been sent by now
        assert not acked("env-1") and not acked("env-2")  # Slack will send the event again
        [warning] = adapter_lines(caplog, logging.WARNING)
        assert warning.levelno == logging.WARNING and warning.exc_info is None
        assert "left unacknowledged for Slack to send again until it is back" in warning.getMessage()
        assert not any(r.exc_info for r in adapter_lines(caplog, logging.DEBUG))  # no traceback
        assert bolt_lines(caplog) == []  # nor Bolt's line for each envelope: the outage is said once
        assert runner.calls == []

        await redis_proxy.restore()
        caplog.clear()
        with caplog.at_level(logging.INFO):
            await fake_slack.push(hello("1.000001"), envelope_id="env-3", retry_attempt=2)
            await fake_slack.wait_for_socket(lambda fake: acked("env-3"))
            await fake_slack.push(hello("1.000001"), envelope_id="env-4", retry_attempt=3)
            await fake_slack.wait_for_socket(lambda fake: acked("env-4"))
            await gateway.drain(timeout=10)
        assert [r.getMessage() for r in adapter_lines(caplog, logging.INFO)] == [
            "the store answers again: Slack Socket Mode events are acknowledged as usual"
        ]
        assert [c.text for c in runner.calls] == ["hello"]  # once, though sent four times
        replies = [m.get("text") for m in fake_slack.of("chat.postMessage") if m.get("channel") == "D7"]
        assert replies.count("You said: hello") == 1
    finally:
        await gateway.stop(grace=1)


async def test_a_bug_in_a_socket_mode_listener_still_logs_its_traceback(
    fake_slack: FakeSlack, redis_stores: RedisStoreFactory, caplog: pytest.LogCaptureFixture, monkeypatch
):
    gateway = Gateway(GatewayConfig(streaming="off"), redis_stores(), ScriptedRunner())
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    adapter = SlackAdapter(settings, gateway)
    gateway.register(adapter)
    bolt_speaks(caplog, adapter)

    async def broken(message: object) -> None:
        raise KeyError("a bug")

    monkeypatch.setattr(gateway, "accept", broken)
    await gateway.start(workers=1)
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        with caplog.at_level(logging.INFO):
            await fake_slack.push(hello("2.000001"), envelope_id="env-bug")
            await until(lambda: adapter_lines(caplog, logging.ERROR) and bolt_lines(caplog))
        [line] = adapter_lines(caplog, logging.WARNING)
        assert line.levelno == logging.ERROR and line.exc_info is not None
        [bolt] = bolt_lines(caplog)  # Bolt's own line is kept for a bug
        assert "status: 500" in bolt
    finally:
        await gateway.stop(grace=1)


async def test_the_outage_is_over_only_once_the_store_answers_a_ping(
    fake_slack: FakeSlack,
    redis_stores: RedisStoreFactory,
    redis_proxy: OutageProxy,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
):
    """An event acknowledged as usual proves nothing about the store when it never reached it (a
    blank message, ignored): the line that says the store is back waits for a ``PING`` it answers."""
    monkeypatch.setattr(outage, "PROBE_SECONDS", 0.0)  # every event handled as usual may ask
    store = redis_stores(url=f"redis://127.0.0.1:{redis_proxy.port}/0")
    gateway = Gateway(GatewayConfig(streaming="off"), store, ScriptedRunner())
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    gateway.register(SlackAdapter(settings, gateway))
    await gateway.start(workers=1)
    acked = lambda envelope: any(a.get("envelope_id") == envelope for a in fake_slack.socket_acks)  # noqa: E731
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        await redis_proxy.cut()
        with caplog.at_level(logging.INFO):
            await fake_slack.push(hello("3.000001"), envelope_id="env-1")
            await until(lambda: adapter_lines(caplog, logging.WARNING))
            # Redis still down: a blank message is acknowledged as usual, and the outage goes on
            await fake_slack.push(hello("3.000002", text=" "), envelope_id="env-2")
            await fake_slack.wait_for_socket(lambda fake: acked("env-2"))
            assert [r.levelno for r in adapter_lines(caplog, logging.INFO)] == [logging.WARNING]
            await redis_proxy.restore()
            await fake_slack.push(hello("3.000003", text=" "), envelope_id="env-3")
            await fake_slack.wait_for_socket(lambda fake: acked("env-3"))
        assert [r.getMessage() for r in adapter_lines(caplog, logging.INFO)][1:] == [
            "the store answers again: Slack Socket Mode events are acknowledged as usual"
        ]
    finally:
        await gateway.stop(grace=1)
