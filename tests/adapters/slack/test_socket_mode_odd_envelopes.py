"""Socket Mode envelopes at the edges of their documented shape, sent by the fake Slack's WebSocket
as Slack sends them: a lone UTF-16 surrogate escaped in the payload's JSON (``"\\ud800"``) is taken
as U+FFFD, as over HTTP; a payload of the wrong shape (an Events API body without a type, a slash
command without a ``trigger_id``) is acknowledged, with one WARNING line, and reaches no listener:
there is no HTTP status to answer it with, and left unacked Slack would only send it again."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

from .conftest import slack_settings
from .fake_slack import APP_TOKEN, TEAM_ID, FakeSlack

ADAPTER_LOGGERS = ("clarigate.adapters.slack",)


def dm(event_id: str, text: str, user: str = "U7") -> dict[str, object]:
    """An Events API ``event_callback`` of a DM, the payload of an ``events_api`` envelope."""
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D7",
        "user": user,
        "text": text,
        "ts": "1.000001",
    }
    return {"type": "event_callback", "team_id": TEAM_ID, "event_id": event_id, "event": event}


@pytest.fixture
async def socket_gateway(fake_slack: FakeSlack) -> AsyncIterator[tuple[Gateway, ScriptedRunner]]:
    """The gateway with the Slack adapter in Socket Mode, connected to the fake Slack."""
    runner = ScriptedRunner()
    gateway = Gateway(GatewayConfig(), MemoryStore(f"test-{uuid.uuid4().hex[:12]}"), runner)
    settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
    gateway.register(SlackAdapter(settings, gateway))
    await gateway.start(workers=1)
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        yield gateway, runner
    finally:
        await gateway.stop(grace=1)


def acked(fake: FakeSlack, envelope_id: str) -> bool:
    return any(a.get("envelope_id") == envelope_id for a in fake.socket_acks)


def warnings_of_the_adapter(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.levelno >= logging.WARNING and r.name.startswith(ADAPTER_LOGGERS)
    ]


async def test_a_lone_surrogate_in_a_socket_mode_message_is_taken_as_a_replacement_character(
    fake_slack: FakeSlack, socket_gateway: tuple[Gateway, ScriptedRunner]
):
    gateway, runner = socket_gateway
    await fake_slack.push(dm("EvSURR", "a\ud800b"), envelope_id="env-surrogate")  # json.dumps: "\ud800"
    await fake_slack.wait_for_socket(lambda fake: acked(fake, "env-surrogate"))
    await gateway.drain(timeout=10)
    assert [c.text for c in runner.calls] == ["a\ufffdb"]
    assert fake_slack.last_shown()["text"] == "You said: a\ufffdb"


@pytest.mark.parametrize(
    ("kind", "payload", "reason"),
    [
        (
            "events_api",
            {"team_id": TEAM_ID, "event_id": "EvNOTYPE", "event": dm("x", "hi")["event"]},
            "without a type",
        ),
        (
            "slash_commands",
            {
                "command": "/clarigate",
                "text": "help",
                "user_id": "U7",
                "channel_id": "D7",
                "team_id": TEAM_ID,
            },
            "without a trigger_id",
        ),
    ],
)
async def test_a_socket_mode_payload_of_the_wrong_shape_is_acked_with_one_warning(
    fake_slack: FakeSlack,
    socket_gateway: tuple[Gateway, ScriptedRunner],
    caplog: pytest.LogCaptureFixture,
    kind: str,
    payload: dict[str, object],
    reason: str,
):
    gateway, runner = socket_gateway
    with caplog.at_level(logging.INFO):
        await fake_slack.push(payload, envelope_id="env-odd", kind=kind)
        await fake_slack.wait_for_socket(lambda fake: acked(fake, "env-odd"))
        await gateway.drain(timeout=10)
    [line] = warnings_of_the_adapter(caplog)
    assert "wrong shape" in line and reason in line
    assert runner.calls == [] and fake_slack.of("chat.postMessage") == []


async def test_a_socket_mode_payload_bolt_cannot_route_is_acked_with_one_warning(
    fake_slack: FakeSlack,
    socket_gateway: tuple[Gateway, ScriptedRunner],
    caplog: pytest.LogCaptureFixture,
):
    """Past the shape check, Bolt's own matchers choke on it (a legacy attachment action whose
    ``callback_id`` is not text: the action matcher searches it with a pattern): a bad request,
    which over HTTP is a 400; over Socket Mode it is acknowledged, so Slack does not send it again."""
    gateway, runner = socket_gateway
    payload = {
        "type": "interactive_message",
        "callback_id": 7,
        "user": {"id": "U7", "name": "u7"},
        "team": {"id": TEAM_ID, "domain": "test"},
        "channel": {"id": "D7", "name": "directmessage"},
        "actions": [{"name": "go", "type": "button", "value": "go"}],
        "action_ts": "1.000002",
        "message_ts": "1.000001",
        "trigger_id": "1.2.3",
    }
    with caplog.at_level(logging.INFO):
        await fake_slack.push(payload, envelope_id="env-choke", kind="interactive")
        await fake_slack.wait_for_socket(lambda fake: acked(fake, "env-choke"))
        await gateway.drain(timeout=10)
    [line] = warnings_of_the_adapter(caplog)
    assert "Bolt cannot route" in line and "acknowledged" in line
    assert runner.calls == [] and fake_slack.of("chat.postMessage") == []
