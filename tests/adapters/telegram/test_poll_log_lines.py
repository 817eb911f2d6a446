"""Long polling logs a ``getUpdates`` at INFO only when updates came; failures as ever."""

from __future__ import annotations

import logging
from types import SimpleNamespace
from typing import Any

import pytest
from telegram.error import BadRequest

from clarigate.adapters.telegram.polling import OFFSET_KEY, LeasedPoller


class _Bot:
    def __init__(self, *answers: tuple[Any, ...] | Exception) -> None:
        self.answers = list(answers)

    async def get_updates(self, **_: Any) -> tuple[Any, ...]:
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


class _State:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    async def get_json(self, key: str) -> Any:
        return self.values.get(key)

    async def set_json(self, key: str, value: Any, ttl: int) -> None:
        self.values[key] = value


def _poller(bot: _Bot, state: _State, handled: list[int]) -> LeasedPoller:
    async def handle(update: Any) -> None:
        handled.append(update.update_id)

    poller = LeasedPoller(bot, state, handle)  # type: ignore[arg-type]
    poller._stopping.set()  # no pause after a failed round
    return poller


def _lines(caplog: pytest.LogCaptureFixture, level: int) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= level]


async def test_an_empty_long_poll_is_not_an_info_line(caplog: pytest.LogCaptureFixture) -> None:
    """An idle bot ends a long poll every 10 s: one INFO line each was ~8,600 a day of nothing."""
    poller = _poller(_Bot(()), _State(), [])
    with caplog.at_level(logging.DEBUG):
        assert await poller.poll_once() == 0
    assert _lines(caplog, logging.INFO) == []
    assert "telegram getUpdates: ok, no update" in _lines(caplog, logging.DEBUG)


async def test_a_poll_that_brings_updates_is_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    state, handled = _State(), []
    poller = _poller(_Bot((SimpleNamespace(update_id=7), SimpleNamespace(update_id=8))), state, handled)
    with caplog.at_level(logging.INFO):
        assert await poller.poll_once() == 2
    assert _lines(caplog, logging.INFO) == ["telegram getUpdates: ok, 2 update(s)"]
    assert handled == [7, 8] and state.values[OFFSET_KEY] == 9


async def test_a_failed_poll_is_still_logged(caplog: pytest.LogCaptureFixture) -> None:
    poller = _poller(_Bot(BadRequest("Conflict: terminated by other getUpdates request")), _State(), [])
    with caplog.at_level(logging.INFO):
        assert await poller.poll_once() == 0
    refused, failed = _lines(caplog, logging.INFO)
    assert refused == "telegram getUpdates: refused: Conflict: terminated by other getUpdates request"
    # with the wait before the next round (the backoff's first, spread a little)
    assert failed.startswith("telegram getUpdates failed: Conflict: terminated by other getUpdates request")
    assert "(next try in " in failed
