"""A webhook call refused for its secret is said as deploy/README.md promises for every 4xx: one
WARNING line ``bad request to <route> (<status>): <reason>``, never quoting a secret, and at most
one a minute, so that a flood of forged calls cannot fill the log."""

from __future__ import annotations

import logging
import time

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.runtime import repeated

from .harness import SECRET, message_update

LOGGER = "clarigate.adapters.telegram.receive"


def said(caplog: pytest.LogCaptureFixture, level: int = logging.WARNING) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == LOGGER and r.levelno == level]


async def test_a_refused_secret_is_one_warning_line_and_a_flood_one_line_a_minute(bench, caplog, monkeypatch):
    runner = ScriptedRunner()
    tg = await bench(runner)
    with caplog.at_level(logging.DEBUG, logger=LOGGER):
        assert (await tg.post(message_update("hi"), secret=None)).status_code == 403
        for guess in range(20):
            assert (await tg.post(message_update("hi"), secret=f"{SECRET}-{guess}")).status_code == 403
    assert said(caplog) == [
        "bad request to /telegram/webhook (403): no X-Telegram-Bot-Api-Secret-Token header: not a call "
        "of Telegram's"
    ]
    assert len(said(caplog, logging.DEBUG)) == 20  # the rest, below the operator's level
    assert not any(SECRET in record.getMessage() for record in caplog.records)  # nor the guesses

    caplog.clear()
    later = time.monotonic() + 61
    monkeypatch.setattr(repeated, "clock", lambda: later)  # the minute is over
    with caplog.at_level(logging.INFO, logger=LOGGER):
        assert (await tg.post(message_update("hi"), secret="Guess-C0FFEE")).status_code == 403
    (line,) = said(caplog)
    assert line.startswith(
        "bad request to /telegram/webhook (403): wrong X-Telegram-Bot-Api-Secret-Token: a forgery, "
        "or TELEGRAM_WEBHOOK_SECRET changed"
    )
    assert "(20 more like it since the last such line)" in line
    assert "C0FFEE" not in line

    await tg.gateway.drain()
    assert runner.calls == []
