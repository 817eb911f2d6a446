"""The bot's identity (``auth.test``) is had at start, never asked for while an event waits for its
ack: a web process whose first event comes while Slack's Web API is unreachable acknowledges it
(200, queued) and answers it once Slack is back, with no ERROR line and no request counted as failed."""

from __future__ import annotations

import logging

import httpx
import pytest

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from clarigate.gateway.web.server import build_app
from tests.http_errors import http_errors

from ...gateway.jobs.crash import eventually
from .conftest import MakeWorld, slack_settings
from .fake_slack import BOT_ID, BOT_USER_ID, FakeSlack
from .slack_user import SlackUser

EVENTS = "/slack/events"


async def test_a_first_event_while_slack_is_unreachable_is_acked_and_answered_once_slack_is_back(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
) -> None:
    runner = ScriptedRunner()
    world = await make_world(runner)  # started: auth.test answered, the bot's identity known
    port, errors_before = world.fake.port, http_errors(EVENTS)
    await world.fake.stop()  # Slack's Web API unreachable: every connection refused
    with caplog.at_level(logging.INFO):
        response, _ = await world.user.dm("hello")  # the process's first request
        assert response.status_code == 200
        await eventually(lambda: runner.calls, within=10)  # taken from the queue while Slack is away
        await world.fake.start(port)  # Slack is back
        await world.settle()

    assert [c.text for c in runner.calls] == ["hello"]
    assert [m["text"] for m in world.fake.shown()] == ["You said: hello"]
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
    assert http_errors(EVENTS) == errors_before


async def test_events_cost_no_auth_test_and_the_bots_own_messages_stay_ignored(make_world: MakeWorld) -> None:
    runner = ScriptedRunner()
    world = await make_world(runner)
    mine = {"bot_id": BOT_ID, "user": BOT_USER_ID}  # the bot's own message, as Slack echoes it to events

    own = await world.user.event(
        {"type": "message", "channel_type": "im", "channel": "D1", "text": "hi"} | mine
    )
    first, _ = await world.user.dm("first")
    second, _ = await world.user.mention("second")
    await world.settle()

    assert [own.status_code, first.status_code, second.status_code] == [200, 200, 200]
    assert len(world.fake.attempts("auth.test")) == 1  # the start's, and no other
    assert [c.text for c in runner.calls] == ["first", "second"]  # the mention of the bot stripped


async def test_an_event_before_the_identity_is_known_is_left_for_slack_to_send_again(
    fake_slack: FakeSlack, caplog: pytest.LogCaptureFixture
) -> None:
    """Without the start's identity, own messages and mentions of the bot cannot be told: 503,
    Slack redelivers; no ERROR line, no call to Slack."""
    runner = ScriptedRunner()
    gateway = Gateway(GatewayConfig(), MemoryStore("identity-unknown"), runner)
    gateway.register(SlackAdapter(slack_settings(fake_slack), gateway))  # not started: no identity
    transport = httpx.ASGITransport(app=build_app(gateway))
    async with httpx.AsyncClient(transport=transport, base_url="http://gateway") as http:
        user = SlackUser(http, fake_slack)
        with caplog.at_level(logging.INFO):
            response, _ = await user.dm("hello")
    assert response.status_code == 503, response.text
    assert fake_slack.calls == [] and runner.calls == []
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []
