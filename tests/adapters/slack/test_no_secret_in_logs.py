"""Every log line of a whole Slack run (HTTP events and Socket Mode) holds no configured secret."""

from __future__ import annotations

import logging
import time
import uuid
from urllib.parse import urlencode

import pytest
from pydantic import SecretStr

from clarigate.adapters.slack import SlackAdapter
from clarigate.adapters.testing import ScriptedRunner, asking, choice_request
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runtime.config import GatewayConfig
from clarigate.gateway.store.memory import MemoryStore
from tests.log_capture import assert_no_secret, captured_logs, carries_inbound_id

from .conftest import MakeWorld, slack_settings
from .fake_slack import APP_TOKEN, BOT_TOKEN, FakeSlack
from .slack_user import SIGNING_SECRET, signed_headers


def script(turn):
    if turn.response is None:
        return asking(choice_request("Which framework?", ["React", "Vue"]))
    return TurnOutput(replies=["scaffolding"])


@pytest.mark.parametrize(
    ("log_format", "level", "chatty"),
    [("text", logging.INFO, False), ("json", logging.DEBUG, False), ("text", logging.DEBUG, True)],
)
async def test_http_events_run_logs_no_secret(make_world: MakeWorld, log_format, level, chatty):
    secrets = [BOT_TOKEN, SIGNING_SECRET]
    with captured_logs(secrets, log_format=log_format, level=level, chatty_libraries=chatty) as logs:
        world = await make_world(ScriptedRunner(script))
        assert await world.adapter.check() == []
        response, _ = await world.user.dm("set up a web app")
        assert response.status_code == 200
        await world.settle()
        question = world.fake.posted()
        assert (await world.user.click(question, "clarigate:o2")).status_code == 200
        await world.settle()
        assert world.fake.last_shown()["text"] == "scaffolding"
        forged = await world.user.post(
            b'{"type":"event_callback"}', "application/json", {"X-Slack-Signature": "v0=0"}
        )
        assert forged.status_code == 401
        world.fake.fail_next(3, status=500)
        await world.user.dm("again")
        await world.settle()
        logging.getLogger("clarigate.adapters.slack").warning(
            "headers: %s", {"Authorization": f"Bearer {BOT_TOKEN}"}
        )
    assert_no_secret(logs, secrets)
    assert len(logs.lines()) > 3 and "Bearer ***" in logs.text()
    calls = [line for line in logs.lines() if "chat.postMessage: ok, message " in line]
    assert any(carries_inbound_id(line, "slack") for line in calls)  # the run's inbound id rides along


async def test_socket_mode_run_logs_no_secret(fake_slack: FakeSlack):
    secrets = [BOT_TOKEN, APP_TOKEN]
    with captured_logs(secrets, chatty_libraries=True) as logs:
        runner = ScriptedRunner()
        gateway = Gateway(GatewayConfig(), MemoryStore(f"test-{uuid.uuid4().hex[:12]}"), runner)
        settings = slack_settings(fake_slack, app_token=SecretStr(APP_TOKEN), signing_secret=None)
        gateway.register(SlackAdapter(settings, gateway))
        await gateway.start(workers=1)
        try:
            await fake_slack.wait_for_socket(lambda fake: fake.sockets)
            event = {"type": "message", "channel_type": "im", "channel": "D7", "user": "U7", "text": "hi"}
            body = {
                "type": "event_callback",
                "team_id": "T0TEAM",
                "event_id": "EvS",
                "event": {**event, "ts": "1.1"},
            }
            await fake_slack.push(body, envelope_id="env-1")
            await fake_slack.wait_for_socket(
                lambda fake: any(a.get("envelope_id") == "env-1" for a in fake.socket_acks)
            )
            await gateway.drain(timeout=10)
            assert [c.text for c in runner.calls] == ["hi"]
        finally:
            await gateway.stop(grace=1)
    assert_no_secret(logs, secrets)


VERIFICATION_TOKEN = "gIkuvaNzQIHg97ATvDxqgjtO"
RESPONSE_URL = "https://hooks.slack.com/commands/T0TEAM/1234/secretpathSECRETPATH"
SLASH_COMMAND = {
    "token": VERIFICATION_TOKEN,  # first: a form body starts with it
    "team_id": "T0TEAM",
    "channel_id": "D1",
    "user_id": "U1",
    "command": "/clarigate",
    "text": "my private words",
    "response_url": RESPONSE_URL,
    "trigger_id": "1.1.trigger",
}


@pytest.mark.parametrize(
    ("level", "chatty"), [(logging.INFO, False), (logging.DEBUG, False), (logging.INFO, True)]
)
@pytest.mark.parametrize("refused", ["replayed an hour later", "signed with another secret"])
async def test_a_refused_request_is_not_logged_by_bolt(make_world: MakeWorld, level, chatty, refused):
    # Bolt sets its own loggers' levels (the root logger's, when the app is built), past the
    # WARNING ``slack_bolt`` is held at: its INFO line for a refused request quotes the body whole,
    # a slash command's verification token and response_url (which posts into the channel) with it.
    # Lowered on purpose (``chatty``), Bolt says it, and the redactor masks both.
    with captured_logs([], level=level, chatty_libraries=chatty) as logs:
        world = await make_world(ScriptedRunner())
        body = urlencode(SLASH_COMMAND).encode()
        if refused == "replayed an hour later":
            signature = signed_headers(body, timestamp=int(time.time()) - 3600)
        else:
            signature = signed_headers(body, secret="not-the-signing-secret")
        headers = {**signature, "Content-Type": "application/x-www-form-urlencoded"}
        response = await world.user.http.post("/slack/events", content=body, headers=headers)
        assert response.status_code == 401
    bolt = [
        line for line in logs.lines() if " slack_bolt" in line and (" INFO " in line or " DEBUG " in line)
    ]
    assert bool(bolt) is chatty, bolt
    for secret in (VERIFICATION_TOKEN, RESPONSE_URL, "secretpathSECRETPATH"):
        assert secret not in logs.text()
    assert chatty or "my+private+words" not in logs.text()
