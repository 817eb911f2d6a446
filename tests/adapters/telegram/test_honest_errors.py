"""Bad updates get 400 and one line; our own failures get a 500, a traceback and a count.

Updates as the Bot API documents them (https://core.telegram.org/bots/api#update), with
what a broken proxy or a forger holding the secret might get wrong.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
import redis.exceptions

from clarigate.adapters.telegram import adapter as telegram_adapter
from clarigate.adapters.testing import ScriptedRunner
from tests.http_errors import (
    http_errors,
    http_unavailable,
    one_bad_request_line,
    one_failure_with_traceback,
    problem_lines,
)

from .harness import ALICE, callback_update, message_update

ROUTE = "/telegram/webhook"


def with_message(**fields: Any) -> dict[str, Any]:
    """A private text message whose ``fields`` are set as given (None: left out)."""
    update = message_update("hi")
    update["message"].update(fields)
    update["message"] = {k: v for k, v in update["message"].items() if v is not None}
    return update


def with_tap(**fields: Any) -> dict[str, Any]:
    """A tap on a button of message 5 whose ``fields`` are set as given (None: left out)."""
    update = callback_update("t|o1", 5)
    update["callback_query"].update(fields)
    update["callback_query"] = {k: v for k, v in update["callback_query"].items() if v is not None}
    return update


DEEP = b"[" * 100_000 + b"]" * 100_000
MALFORMED = {
    "not JSON": b"{'update_id': 1",
    "JSON nested past the parser's depth": b'{"update_id": 1, "message": ' + DEEP + b"}",
    "a message without a chat": with_message(chat=None),
    "a chat without a type": with_message(chat={"id": 5}),
    "text that is a number": with_message(text=42),
    "an entity with a text offset": with_message(entities=[{"type": "mention", "offset": "0", "length": 2}]),
    "a sender without an id": with_message(**{"from": {"is_bot": False, "first_name": "Ann"}}),
    "a tap without who tapped": with_tap(**{"from": None}),
    "tap data that is not text": with_tap(data=7),
}


@pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_malformed_update_is_400_with_one_line_and_nothing_runs(
    bench, caplog: pytest.LogCaptureFixture, body: dict[str, Any] | bytes
):
    runner = ScriptedRunner()
    tg = await bench(runner)
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response = await tg.post(body)
    await tg.gateway.drain()
    assert response.status_code == 400 and "Traceback" not in response.text
    line = one_bad_request_line(caplog, 400)
    assert response.json()["error"] in line and ROUTE in line
    assert http_errors(ROUTE) == before
    assert runner.calls == [] and tg.api.of("sendMessage") == [] and tg.api.of("answerCallbackQuery") == []


async def test_a_bug_while_handling_an_update_is_500_logged_with_its_traceback_and_counted(
    bench, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    runner = ScriptedRunner()
    tg = await bench(runner)

    def broken(message: Any, username: str) -> Any:
        raise TypeError("parse_command() missing 1 required positional argument")

    monkeypatch.setattr(telegram_adapter, "parse_command", broken)
    update = message_update("hello", user=ALICE)
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response = await tg.post(update)
    assert response.status_code == 500 and "Traceback" not in response.text
    text = one_failure_with_traceback(caplog, TypeError)
    assert "Traceback" in text and "in broken" in text and ROUTE in text
    assert http_errors(ROUTE) == before + 1

    monkeypatch.undo()  # fixed: Telegram's redelivery of the same update now runs, once
    await tg.deliver(update)
    await tg.deliver(update)
    assert [c.text for c in runner.calls] == ["hello"]


async def test_the_store_unreachable_is_503_with_retry_after_and_the_redelivery_runs_once(
    bench, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """An outage, not a bug: Telegram delivers an update again until it gets a 2xx."""
    runner = ScriptedRunner()
    tg = await bench(runner)

    async def lost(**job: Any) -> bool:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(tg.gateway.store, "accept_job", lost)
    update = message_update("hello", user=ALICE)
    before, errors_before = http_unavailable(ROUTE), http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        answers = [await tg.post(update) for _ in range(2)]
    assert [r.status_code for r in answers] == [503, 503] and answers[0].headers["retry-after"] == "5"
    [line] = problem_lines(caplog)
    assert line.levelno == logging.WARNING and line.exc_info is None
    assert http_unavailable(ROUTE) == before + 2 and http_errors(ROUTE) == errors_before

    monkeypatch.undo()  # Redis is back: the redelivery runs, once
    await tg.deliver(update)
    assert [c.text for c in runner.calls] == ["hello"]
