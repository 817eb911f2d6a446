"""Bad requests get a 4xx and one line; our own failures get a 500, a traceback and a count.

A click's payload as Slack documents it (https://api.slack.com/reference/interaction-payloads/block-actions),
signed, with what a platform (or a broken proxy) might get wrong.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from clarigate.adapters.slack import receive
from tests.http_errors import http_errors, one_bad_request_line, one_failure_with_traceback
from tests.log_capture import assert_no_secret, captured_logs

from .conftest import MakeWorld
from .fake_slack import BOT_TOKEN, TEAM_ID
from .slack_user import SIGNING_SECRET

ROUTE = "/slack/events"
USER = {"id": "U1", "username": "u1", "name": "u1", "team_id": TEAM_ID}


def block_actions(**action: Any) -> dict[str, Any]:
    """A ``block_actions`` click on a button of a message, its action given by ``action``."""
    return {
        "type": "block_actions",
        "user": USER,
        "api_app_id": "A0APP",
        "token": "legacy",
        "container": {"type": "message", "message_ts": "1.2", "channel_id": "C1", "is_ephemeral": False},
        "trigger_id": "1.2.3",
        "team": {"id": TEAM_ID, "domain": "test"},
        "channel": {"id": "C1", "name": "general"},
        "message": {"type": "message", "ts": "1.2", "text": "Which region?", "blocks": []},
        "actions": [action],
    }


BUTTON = {"block_id": "b1", "type": "button", "value": "tok|o1", "action_ts": "1.3"}


@pytest.mark.parametrize(
    "action",
    [
        BUTTON,  # no action_id
        {**BUTTON, "action_id": 7},
        {**BUTTON, "action_id": "clarigate:o1", "value": ["tok|o1"]},
        {**BUTTON, "action_id": "clarigate:o1", "selected_option": "o1"},
    ],
)
async def test_a_signed_click_our_code_cannot_use_is_400_with_one_line(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, action: dict[str, Any]
):
    world = await make_world()
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response = await world.user.interact(block_actions(**action))
    await world.settle()
    assert response.status_code == 400
    assert "block_actions" in one_bad_request_line(caplog, 400)
    assert http_errors(ROUTE) == before
    assert world.fake.of("chat.postEphemeral") == [] and world.fake.of("chat.update") == []


async def test_any_other_payload_bolt_chokes_on_is_400_not_500(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """Past our own shape check (here: switched off), what Bolt's matchers fail on is still the
    payload's fault."""
    world = await make_world()
    monkeypatch.setattr(receive, "shape_problem", lambda body: None)
    with caplog.at_level(logging.INFO):
        no_id = await world.user.interact(block_actions(**BUTTON))
        no_actions = await world.user.interact({**block_actions(), "actions": []})
    assert [no_id.status_code, no_actions.status_code] == [400, 400]
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 2 and all("Bolt cannot route" in line for line in warnings), warnings


async def test_malformed_bodies_get_400_and_one_line_each(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
):
    world = await make_world()
    bodies = [
        (b'{"type": "event_callback", ', "application/json"),
        (b"payload=%7Bnot-json", "application/x-www-form-urlencoded"),
        (
            json.dumps({"type": "event_callback", "event": {"type": "message", "ts": 5}}).encode(),
            "application/json",
        ),
    ]
    for body, content_type in bodies:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            response = await world.user.post(body, content_type)
        assert response.status_code == 400
        assert response.json()["error"] == one_bad_request_line(caplog, 400).split(": ", 1)[1]


async def test_a_listener_that_raises_a_bug_is_500_logged_with_its_traceback_and_counted(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
):
    world = await make_world()

    async def broken(message: Any) -> Any:
        raise TypeError("accept() got an unexpected keyword argument")

    world.gateway.accept = broken  # type: ignore[method-assign]
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response, _ = await world.user.dm("hello")
    assert response.status_code == 500 and "Traceback" not in response.text
    text = one_failure_with_traceback(caplog, TypeError)
    assert "Traceback" in text and "in broken" in text and ROUTE in text
    assert http_errors(ROUTE) == before + 1


async def test_the_traceback_of_a_failure_holds_no_secret(make_world: MakeWorld):
    secrets = [BOT_TOKEN, SIGNING_SECRET]
    with captured_logs(secrets) as logs:
        world = await make_world()

        async def broken(message: Any) -> Any:
            raise TypeError(f"cannot use the client of {BOT_TOKEN}")

        world.gateway.accept = broken  # type: ignore[method-assign]
        response, _ = await world.user.dm("hello")
    assert response.status_code == 500
    assert "Traceback" in logs.text() and "TypeError: cannot use the client of" in logs.text()
    assert_no_secret(logs, secrets)
