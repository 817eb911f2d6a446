"""Every request Slack may send gets 200 (a 404 or 500 only makes Slack retry, or disable the app),
logged at debug and counted when there is nothing to do. Payloads as Slack's docs show them."""

from __future__ import annotations

import json
import logging
import time
import uuid
from typing import Any

import pytest

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.slack.receive import IGNORED_REQUESTS
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore

from .conftest import MakeWorld, slack_settings
from .fake_slack import APP_TOKEN, TEAM_ID, FakeSlack

USER = {"id": "U1", "username": "u1", "name": "u1", "team_id": TEAM_ID}
TEAM = {"id": TEAM_ID, "domain": "test"}


def ignored(kind: str) -> float:
    """How many requests of ``kind`` were acknowledged with nothing to do."""
    return IGNORED_REQUESTS.labels(kind)._value.get()


def event_callback(event: dict[str, Any]) -> dict[str, Any]:
    return {
        "token": "legacy",
        "team_id": TEAM_ID,
        "api_app_id": "A0APP",
        "event": event,
        "type": "event_callback",
        "event_id": f"Ev{uuid.uuid4().hex[:10].upper()}",
        "event_time": int(time.time()),
    }


APP_RATE_LIMITED = {
    "token": "legacy",
    "type": "app_rate_limited",
    "team_id": TEAM_ID,
    "minute_rate_limited": 1518467820,
    "api_app_id": "A0APP",
}
REACTION = event_callback(
    {
        "type": "reaction_added",
        "user": "U1",
        "reaction": "thumbsup",
        "item_user": "U0BOT",
        "item": {"type": "message", "channel": "C1", "ts": "1360782400.498405"},
        "event_ts": "1360782804.083113",
    }
)
FUTURE_EVENT = event_callback({"type": "some_event_slack_adds_later", "event_ts": "1.2"})
SHORTCUT = {
    "type": "shortcut",
    "token": "legacy",
    "action_ts": "1581106241.371594",
    "team": TEAM,
    "user": USER,
    "callback_id": "shortcut_create_task",
    "trigger_id": "944799105734.773906753841.38b5894552bdd4a780554ee59d1f3bbb",
}
MESSAGE_ACTION = {
    "type": "message_action",
    "token": "legacy",
    "action_ts": "1581106241.371594",
    "team": TEAM,
    "user": USER,
    "channel": {"id": "C1", "name": "general"},
    "callback_id": "summarize",
    "trigger_id": "13345224609.738474920.8088930838d88f008e0",
    "message_ts": "1548261231.000200",
    "message": {"type": "message", "user": "U2", "ts": "1548261231.000200", "text": "hi"},
    "response_url": "https://hooks.slack.com/app-actions/T0/1/x",
}
BLOCK_SUGGESTION = {
    "type": "block_suggestion",
    "user": USER,
    "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1", "is_ephemeral": False},
    "api_app_id": "A0APP",
    "token": "legacy",
    "action_id": "external_select",
    "block_id": "b1",
    "value": "ab",
    "team": TEAM,
}
VIEW_CLOSED = {
    "type": "view_closed",
    "team": TEAM,
    "user": USER,
    "api_app_id": "A0APP",
    "token": "legacy",
    "view": {"id": "V1", "type": "modal", "callback_id": "clarigate:form", "private_metadata": "{}"},
    "is_cleared": False,
}
FOREIGN_CLICK = {
    "type": "block_actions",
    "user": USER,
    "api_app_id": "A0APP",
    "token": "legacy",
    "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1", "is_ephemeral": False},
    "trigger_id": "1.2.3",
    "team": TEAM,
    "channel": {"id": "C1", "name": "general"},
    "message": {"type": "message", "ts": "1.2", "text": "from another app", "blocks": []},
    "actions": [
        {
            "action_id": "approve_request",
            "block_id": "b1",
            "type": "button",
            "value": "42",
            "text": {"type": "plain_text", "text": "Approve"},
            "action_ts": "1.3",
        }
    ],
}


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        (APP_RATE_LIMITED, "app_rate_limited"),
        (REACTION, "event:reaction_added"),
        (FUTURE_EVENT, "event:other"),
        (SHORTCUT, "shortcut"),
        (MESSAGE_ACTION, "message_action"),
        (BLOCK_SUGGESTION, "block_suggestion"),
        (VIEW_CLOSED, "view_closed"),
        (FOREIGN_CLICK, "block_actions"),
    ],
)
async def test_a_request_with_nothing_to_do_gets_200_a_debug_line_and_a_count(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, body: dict[str, Any], kind: str
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    before = ignored(kind)
    with caplog.at_level(logging.DEBUG, logger="clarigate.adapters.slack"):
        if body.get("type") in ("event_callback", "app_rate_limited"):
            response = await world.user.post(json.dumps(body).encode(), "application/json")
        else:
            response = await world.user.interact(body)
    await world.settle()
    assert response.status_code == 200
    assert ignored(kind) - before == 1
    assert any(r.levelno == logging.DEBUG and kind in r.getMessage() for r in caplog.records)
    assert runner.calls == [] and world.fake.of("chat.postMessage") == []


async def test_a_failing_listener_still_answers_500_so_slack_redelivers(make_world: MakeWorld):
    world = await make_world(ScriptedRunner())

    async def broken(message: Any) -> Any:
        raise ConnectionError("the store is down")

    world.gateway.accept = broken  # type: ignore[method-assign]
    response, _ = await world.user.dm("hello")
    assert response.status_code == 500


async def test_socket_mode_acknowledges_requests_with_nothing_to_do(fake_slack: FakeSlack):
    store = MemoryStore(f"test-{uuid.uuid4().hex[:12]}")
    gateway = Gateway(GatewayConfig(), store, ScriptedRunner())
    settings = slack_settings(fake_slack, app_token=APP_TOKEN, signing_secret=None)
    gateway.register(SlackAdapter(settings, gateway))
    await gateway.start(workers=1)
    try:
        await fake_slack.wait_for_socket(lambda fake: fake.sockets)
        await fake_slack.push(SHORTCUT, envelope_id="env-shortcut", kind="interactive")
        await fake_slack.push(FUTURE_EVENT, envelope_id="env-event")
        await fake_slack.wait_for_socket(
            lambda fake: {"env-shortcut", "env-event"} <= {a.get("envelope_id") for a in fake.socket_acks}
        )
    finally:
        await gateway.stop(grace=1)


async def test_messages_not_for_the_bot_are_acknowledged_and_counted(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    before = ignored("event:message")
    edited = {"type": "message", "subtype": "message_changed", "channel": "D1", "channel_type": "im"}
    chatter = await world.user.channel_message("lunch?")  # top level, no mention
    changed = await world.user.event({**edited, "hidden": True, "ts": "1.5", "event_ts": "1.5"})
    await world.settle()
    assert [chatter.status_code, changed.status_code] == [200, 200]
    assert ignored("event:message") - before == 2 and runner.calls == []
