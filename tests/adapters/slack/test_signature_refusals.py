"""Requests signed with another signing secret (an operator's first mistake) are refused (401)
and said in one WARNING line naming SLACK_SIGNING_SECRET, as deploy/README.md promises a bad
request (``bad request to <route> (<status>): <reason>``): no secret, no body; a flood of forged
requests makes one line a minute, saying how many more were refused."""

from __future__ import annotations

import json
import logging
import time

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime import repeated

from .conftest import MakeWorld
from .slack_user import SIGNING_SECRET, next_ts, signed_headers
from .test_every_request_answered import event_callback

WRONG_SECRET = "0123456789abcdef0123456789abcdef"  # another app's, or an old one
TEXT = "a person's words"
BODY = json.dumps(
    event_callback(
        {
            "type": "message",
            "channel_type": "im",
            "channel": "D1",
            "user": "U1",
            "text": TEXT,
            "ts": next_ts(),
        }
    )
).encode()


def warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]


def signed_elsewhere(timestamp: int | None = None) -> dict[str, str]:
    """Headers as Slack signs ``BODY`` for an app whose signing secret is not ours."""
    return signed_headers(BODY, secret=WRONG_SECRET, timestamp=timestamp)


async def test_a_wrong_signing_secret_is_one_warning_naming_the_setting(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    with caplog.at_level(logging.INFO):
        response = await world.user.post(BODY, "application/json", signed_elsewhere())
    await world.settle()
    assert response.status_code == 401 and runner.calls == []
    [line] = warnings(caplog)
    assert line.startswith("bad request to /slack/events (401): ") and "SLACK_SIGNING_SECRET" in line
    everything = "\n".join(r.getMessage() for r in caplog.records)
    assert SIGNING_SECRET not in everything and WRONG_SECRET not in everything and TEXT not in everything


async def test_a_stale_signature_names_the_clock(make_world: MakeWorld, caplog: pytest.LogCaptureFixture):
    world = await make_world()
    stale = signed_headers(BODY, timestamp=int(time.time()) - 600)  # our secret, 10 minutes old
    with caplog.at_level(logging.INFO):
        response = await world.user.post(BODY, "application/json", stale)
    assert response.status_code == 401
    [line] = warnings(caplog)
    assert "(401)" in line and "5 minutes" in line and "clock" in line


async def test_a_flood_of_forged_requests_is_one_line_a_minute(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    now = [1000.0]
    monkeypatch.setattr(repeated, "clock", lambda: now[0])
    world = await make_world()
    with caplog.at_level(logging.INFO):
        for _ in range(30):
            assert (await world.user.post(BODY, "application/json", signed_elsewhere())).status_code == 401
            now[0] += 1  # thirty requests in thirty seconds
        assert len(warnings(caplog)) == 1
        now[0] += 31  # a minute after the first line
        forged_again = await world.user.post(BODY, "application/json", signed_elsewhere())
    assert forged_again.status_code == 401
    first, second = warnings(caplog)
    assert first.startswith("bad request to /slack/events (401)")
    assert second.startswith("bad request to /slack/events (401)") and "29 more like it" in second
    genuine, _ = await world.user.dm("hello")  # the events URL still works as usual
    await world.settle()
    assert genuine.status_code == 200 and world.fake.last_shown()["text"] == "You said: hello"


async def test_a_signing_secret_with_a_line_end_still_checks_slacks_signatures(make_world: MakeWorld):
    """SLACK_SIGNING_SECRET from a file with its newline (a Kubernetes Secret made with
    ``--from-file``): Slack's signature is made with the secret alone, and the events come in."""
    runner = ScriptedRunner()
    world = await make_world(runner, slack={"signing_secret": SIGNING_SECRET + "\n"})
    response = await world.user.post(BODY, "application/json", signed_headers(BODY))
    await world.settle()
    assert response.status_code == 200 and len(runner.calls) == 1
