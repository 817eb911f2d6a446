"""A forged request whose signature headers hold what slack_sdk's verifier raises on (a non-ASCII
byte in ``X-Slack-Signature``, a timestamp that is not a number) is refused (401) on every kind of
request the events URL takes, never answered 500 (our bug: an ERROR traceback, a count) or 400."""

from __future__ import annotations

import json
import logging
from urllib.parse import urlencode

import pytest

from clarigate.adapters.testing import ScriptedRunner
from tests.http_errors import http_errors, problem_lines

from .conftest import MakeWorld
from .fake_slack import TEAM_ID
from .slack_user import signed_headers
from .test_every_request_answered import BLOCK_SUGGESTION, FOREIGN_CLICK, event_callback

ROUTE = "/slack/events"
JSON, FORM = "application/json", "application/x-www-form-urlencoded"
DM = {"type": "message", "channel_type": "im", "channel": "D1", "user": "U1", "text": "hi", "ts": "1.1"}
COMMAND = {
    "team_id": TEAM_ID,
    "channel_id": "D1",
    "user_id": "U1",
    "command": "/clarigate",
    "text": "status",
    "response_url": f"https://hooks.slack.com/commands/{TEAM_ID}/1/x",
    "trigger_id": "1.1.trigger",
}
REQUESTS = {
    "an event": (json.dumps(event_callback(DM)).encode(), JSON),
    "an event of the wrong shape": (b'{"type": "event_callback"}', JSON),
    "a slash command": (urlencode(COMMAND).encode(), FORM),
    "a click": (urlencode({"payload": json.dumps(FOREIGN_CLICK)}).encode(), FORM),
    "an options request": (urlencode({"payload": json.dumps(BLOCK_SUGGESTION)}).encode(), FORM),
}


def forged(
    body: bytes, content_type: str, replaced: dict[str, bytes] | None = None
) -> list[tuple[str, bytes]]:
    """Slack's genuine signature headers for ``body``, the ``replaced`` ones sent as raw bytes."""
    headers = {**signed_headers(body), "Content-Type": content_type}
    return [(name, (replaced or {}).get(name, value.encode())) for name, value in headers.items()]


HEADERS = {
    "a signature with a non-ASCII byte": {"X-Slack-Signature": b"v0=\xe9"},
    "a signature of non-ASCII bytes as long as Slack's": {"X-Slack-Signature": b"v0=" + b"\xff" * 64},
    "a timestamp with a non-ASCII digit": {"X-Slack-Request-Timestamp": "١٧٠٠٠٠٠٠٠٠".encode()},
}


@pytest.mark.parametrize("header", HEADERS.values(), ids=HEADERS.keys())
@pytest.mark.parametrize("request_", REQUESTS.values(), ids=REQUESTS.keys())
async def test_signature_headers_the_verifier_cannot_read_are_refused_401(
    make_world: MakeWorld,
    caplog: pytest.LogCaptureFixture,
    request_: tuple[bytes, str],
    header: dict[str, bytes],
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    body, content_type = request_
    before, api_calls = http_errors(ROUTE), len(world.fake.calls)
    with caplog.at_level(logging.INFO):
        response = await world.user.http.post(ROUTE, content=body, headers=forged(body, content_type, header))
    await world.settle()
    assert response.status_code == 401, response.text
    assert http_errors(ROUTE) == before
    assert [r for r in problem_lines(caplog) if r.levelno >= logging.ERROR] == []
    assert runner.calls == [] and len(world.fake.calls) == api_calls


async def test_a_second_signature_header_is_read_too(make_world: MakeWorld):
    """Starlette reads the first copy of a header, Bolt the last: both are looked at."""
    runner = ScriptedRunner()
    world = await make_world(runner)
    body, content_type = REQUESTS["an event"]
    genuine = forged(body, content_type)
    headers = [*genuine, ("X-Slack-Signature", b"v0=\xe9")]
    before = http_errors(ROUTE)
    response = await world.user.http.post(ROUTE, content=body, headers=headers)
    await world.settle()
    assert response.status_code == 401, response.text
    assert http_errors(ROUTE) == before and runner.calls == []
