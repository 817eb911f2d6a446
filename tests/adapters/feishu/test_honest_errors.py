"""Bad requests get a 4xx and one line; our own failures get a 500, a traceback and a count.

Events as Feishu documents them (``im.message.receive_v1``, ``card.action.trigger``), signed
and encrypted as Feishu does, with what a broken proxy or a forger might get wrong.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

import pytest
import redis.exceptions

from clarigate.adapters.feishu import receive
from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime import repeated
from tests.http_errors import (
    http_errors,
    http_unavailable,
    one_bad_request_line,
    one_failure_with_traceback,
    problem_lines,
)

from .events import card_action, message_event

ROUTE = "/feishu/events"


def with_message(**fields: Any) -> dict[str, Any]:
    """A p2p text message event whose message ``fields`` are set as given (None: left out)."""
    event = message_event("hi")
    message = {**event["event"]["message"], **fields}
    event["event"]["message"] = {k: v for k, v in message.items() if v is not None}
    return event


MALFORMED = {
    "content that is not JSON": with_message(content="{text: hi"),
    "content that is a number": with_message(content=42),
    "content nested past the parser's depth": with_message(content="[" * 100_000 + "]" * 100_000),
    "a message without a chat": with_message(chat_id=None),
    "an event without its message": message_event("hi") | {"event": {"sender": {"sender_type": "user"}}},
    "a sender without an open_id": message_event("hi")
    | {"event": {**message_event("hi")["event"], "sender": {}}},
    "a click without its action": card_action({"t": "tok", "a": "o1"}) | {"event": {"operator": {}}},
}


@pytest.mark.parametrize("event", MALFORMED.values(), ids=MALFORMED.keys())
async def test_a_signed_event_of_the_wrong_shape_is_400_with_one_line_and_nothing_runs(
    make_bot, caplog: pytest.LogCaptureFixture, event: dict[str, Any]
):
    runner = ScriptedRunner()
    bot = await make_bot(runner)
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response = await bot.deliver(event)
    await bot.gateway.drain()
    assert response.status_code == 400 and "Traceback" not in response.text
    assert response.json()["error"] in one_bad_request_line(caplog, 400)
    assert http_errors(ROUTE) == before
    assert runner.calls == [] and bot.api.posted() == []


async def test_refusals_are_one_line_each_with_their_status(
    make_bot, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """Each a minute apart: a 401 or 403 is said at most once a minute (``test_webhook_refusals``)."""
    minutes = iter(range(0, 3600, 61))
    monkeypatch.setattr(repeated, "clock", lambda: float(next(minutes)))
    bot = await make_bot()
    wrong_token = message_event("hi")
    wrong_token["header"]["token"] = "v-not-ours"
    for status, send in [
        (400, bot.http.post(ROUTE, content=b"{not json")),
        (401, bot.deliver(message_event("forged"), forge=True)),
        (401, bot.deliver(message_event("stale"), timestamp=time.time() - 9 * 3600)),
        (403, bot.deliver(wrong_token)),
    ]:
        caplog.clear()
        with caplog.at_level(logging.INFO):
            response = await send
        assert response.status_code == status
        [line] = problem_lines(caplog)  # the server's for a 400, the webhook's own for a 401 or 403
        assert (line.levelno, line.exc_info) == (logging.WARNING, None)
        assert line.getMessage().startswith(f"bad request to {ROUTE} ({status}): ")


async def test_a_bug_while_handling_an_event_is_500_logged_with_its_traceback_and_counted(
    make_bot, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    runner = ScriptedRunner()
    bot = await make_bot(runner)

    def broken(payload: dict[str, Any], bot_open_id: str | None = None) -> Any:
        raise TypeError("parse_message() got an unexpected keyword argument")

    monkeypatch.setattr(receive, "parse_message", broken)
    event = message_event("hello")
    before = http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        response = await bot.deliver(event)
    assert response.status_code == 500 and "Traceback" not in response.text
    text = one_failure_with_traceback(caplog, TypeError)
    assert "Traceback" in text and "in broken" in text and ROUTE in text
    assert http_errors(ROUTE) == before + 1

    monkeypatch.undo()  # fixed: Feishu's re-push of the same event now runs, once
    for _ in range(2):
        assert (await bot.deliver(json.loads(json.dumps(event)))).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["hello"]


async def test_the_store_unreachable_is_503_with_retry_after_and_the_re_push_runs_once(
    make_bot, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
):
    """An outage, not a bug: Feishu re-pushes an event it did not get a 200 for."""
    runner = ScriptedRunner()
    bot = await make_bot(runner)

    async def lost(**job: Any) -> bool:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(bot.gateway.store, "accept_job", lost)
    event = message_event("hello")
    before, errors_before = http_unavailable(ROUTE), http_errors(ROUTE)
    with caplog.at_level(logging.INFO):
        answers = [await bot.deliver(json.loads(json.dumps(event))) for _ in range(2)]
    assert [r.status_code for r in answers] == [503, 503] and answers[0].headers["retry-after"] == "5"
    [line] = problem_lines(caplog)
    assert line.levelno == logging.WARNING and line.exc_info is None
    assert http_unavailable(ROUTE) == before + 2 and http_errors(ROUTE) == errors_before

    monkeypatch.undo()  # Redis is back: the re-push runs, once
    assert (await bot.deliver(json.loads(json.dumps(event)))).status_code == 200
    await bot.gateway.drain()
    assert [c.text for c in runner.calls] == ["hello"]
