"""A lone UTF-16 surrogate escaped in an update's JSON (RFC 8259 allows ``"\\ud800"``) is taken as
U+FFFD: the message reaches the agent and is answered, never a 500 that Telegram retries until the
message is lost."""

from __future__ import annotations

import json

from clarigate.adapters.testing import ScriptedRunner

from .harness import ALICE, message_update


async def test_a_lone_surrogate_in_the_text_and_the_senders_name_is_a_replacement_character(bench):
    runner = ScriptedRunner()
    tg = await bench(runner)
    update = message_update("a\ud800b", user={**ALICE, "first_name": "Al\udfffice"})
    body = json.dumps(update).encode()
    assert b"a\\ud800b" in body  # the escape as it travels, in valid JSON

    response = await tg.post(body)
    await tg.settle()

    assert response.status_code == 200
    assert [c.text for c in runner.calls] == ["a\ufffdb"]
    assert [c.params["text"] for c in tg.api.of("sendMessage")] == ["You said: a\ufffdb"]
