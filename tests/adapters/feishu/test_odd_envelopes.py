"""Signed, encrypted events at the edges of their documented shape, over HTTP as Feishu sends them:
a lone UTF-16 surrogate escaped in the JSON (RFC 8259 allows ``"\\ud800"``) is taken as U+FFFD,
in the event and in the message's own JSON content; a 2.0 envelope without a header object or
without an event type is a 400 naming the shape (not a 403 about the token, nor a silent 200)."""

from __future__ import annotations

from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner

from .cards import text_of
from .events import message_event


async def test_a_lone_surrogate_in_the_content_text_is_a_replacement_character(make_bot):
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    event = message_event("a\ud800b")
    assert "a\\ud800b" in event["event"]["message"]["content"]  # the escape as it travels, in valid JSON

    response = await bot.deliver(event)
    await bot.gateway.drain()

    assert response.status_code == 200
    assert [c.text for c in runner.calls] == ["a\ufffdb"]
    assert "You said: a\ufffdb" in text_of(bot.api.shown()[-1])


async def test_a_lone_surrogate_in_the_senders_open_id_is_a_replacement_character(make_bot):
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    response = await bot.deliver(message_event("hi", user="ou_\ud800"))
    await bot.gateway.drain()
    assert response.status_code == 200
    assert [c.text for c in runner.calls] == ["hi"]
    assert "You said: hi" in text_of(bot.api.shown()[-1])


def without_header(event: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in event.items() if key != "header"}


def without_event_type(event: dict[str, Any]) -> dict[str, Any]:
    header = {key: value for key, value in event["header"].items() if key != "event_type"}
    return {**event, "header": header}


@pytest.mark.parametrize(
    ("reshape", "reason"),
    [
        (without_header, "a 2.0 event without a header object"),
        (lambda event: {**event, "header": []}, "a 2.0 event without a header object"),
        (without_event_type, "a 2.0 event header without an event_type"),
    ],
)
async def test_a_signed_envelope_of_the_wrong_shape_is_400_naming_it(make_bot, caplog, reshape, reason):
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    response = await bot.deliver(reshape(message_event("hi")))
    await bot.gateway.drain()

    assert response.status_code == 400
    assert response.json() == {"error": f"event of the wrong shape: {reason}"}
    assert f"bad request to /feishu/events (400): event of the wrong shape: {reason}" in caplog.messages
    assert runner.calls == []
    assert bot.api.shown() == []
