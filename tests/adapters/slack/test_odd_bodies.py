"""Signed requests at the edges of their documented shape, sent over HTTP as Slack sends them:
a lone UTF-16 surrogate escaped in the JSON (RFC 8259 allows ``"\\ud800"``) is taken as U+FFFD,
an Events API body without a type and a slash command without a ``trigger_id`` get a 400
(never a silent 200 that drops the message, nor a dedupe id two commands would share), a body
over the limit a 413 and the server's WARNING line, at most one a minute."""

from __future__ import annotations

import json
import logging
import time
from urllib.parse import urlencode

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime import repeated

from .conftest import MakeWorld
from .fake_slack import TEAM_ID
from .test_unreadable_signatures import COMMAND

FORM = "application/x-www-form-urlencoded"
SERVER_LOGGER = "clarigate.gateway.web.server"


def callback(event_id: str, text: str, user: str = "U1", **outer: object) -> bytes:
    """An ``event_callback`` of a DM, as JSON text: ``json.dumps`` escapes a lone surrogate."""
    event = {
        "type": "message",
        "channel_type": "im",
        "channel": "D1",
        "user": user,
        "text": text,
        "ts": "1800000000.000099",
    }
    envelope = {"type": "event_callback", "team_id": TEAM_ID, "event_id": event_id, "event": event, **outer}
    return json.dumps(envelope).encode()


async def test_a_lone_surrogate_in_the_text_is_taken_as_a_replacement_character(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    body = callback("EvS1", "a\ud800b")
    assert b"a\\ud800b" in body  # the escape as it travels, in valid JSON

    response = await world.user.post(body, "application/json")
    await world.settle()

    assert response.status_code == 200
    assert [c.text for c in runner.calls] == ["a\ufffdb"]
    assert [m["text"] for m in world.fake.shown()] == ["You said: a\ufffdb"]


async def test_a_lone_surrogate_in_the_sender_id_is_taken_too(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    response = await world.user.post(callback("EvS2", "hi", user="U\udc00"), "application/json")
    await world.settle()
    assert response.status_code == 200
    assert [c.text for c in runner.calls] == ["hi"]
    assert [m["text"] for m in world.fake.shown()] == ["You said: hi"]


async def test_an_event_callback_without_a_text_type_is_400_not_dropped(make_world: MakeWorld):
    runner = ScriptedRunner()
    world = await make_world(runner)
    untyped = json.loads(callback("EvT1", "hi"))
    del untyped["type"]
    answers = [
        await world.user.post(json.dumps(untyped).encode(), "application/json"),
        await world.user.post(callback("EvT2", "hi", type=5), "application/json"),
    ]
    await world.settle()
    assert [r.status_code for r in answers] == [400, 400]
    assert all("without a type" in r.json()["error"] for r in answers)
    assert runner.calls == []


async def test_a_slash_command_without_a_trigger_id_is_400(make_world: MakeWorld):
    world = await make_world()
    fields = {name: value for name, value in COMMAND.items() if name != "trigger_id"}
    answer = await world.user.post(urlencode(fields).encode(), FORM)
    assert answer.status_code == 400
    reason = "signed request of the wrong shape: a slash command without a trigger_id"
    assert answer.json() == {"error": reason}
    with_one = await world.user.slash_command("status")  # as Slack always sends it
    assert with_one.status_code == 200


async def test_a_body_over_the_limit_is_413_said_in_one_warning_line_at_most_once_a_minute(
    make_world: MakeWorld, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    runner = ScriptedRunner()
    world = await make_world(runner)
    body = callback("EvBIG", "x" * (3 * 1024 * 1024))
    with caplog.at_level(logging.DEBUG, logger=SERVER_LOGGER):
        answers = [await world.user.post(body, "application/json") for _ in range(5)]
    assert [r.status_code for r in answers] == [413] * 5
    assert said(caplog) == ["bad request to /slack/events (413): request body too large"]
    assert len(said(caplog, logging.DEBUG)) == 4  # the flood, below the operator's level

    caplog.clear()
    later = time.monotonic() + 61
    monkeypatch.setattr(repeated, "clock", lambda: later)  # the minute is over
    with caplog.at_level(logging.INFO, logger=SERVER_LOGGER):
        assert (await world.user.post(body, "application/json")).status_code == 413
    assert said(caplog) == [
        "bad request to /slack/events (413): request body too large (4 more like it since the last such line)"
    ]
    await world.settle()
    assert runner.calls == []


def said(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == SERVER_LOGGER and r.levelno == level]
