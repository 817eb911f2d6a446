"""Shared by the withdrawal tests: an agent away for a while (its messages kept), what the person
is told meanwhile, retries quick enough for a test, and a wait for what the chat shows."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from clarigate.adapters.testing import Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow import outage
from clarigate.gateway.runners.base import AgentUnavailable

KEPT = "The agent is unreachable right now. Your message is kept: I will answer once it is back."
STOPPED = "■ Stopped. What was already done stays done."


class Away:
    """A scripted agent that is unreachable until ``until`` (monotonic), then echoes; ``ran``: the
    texts it answered."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds
        self.ran: list[str] = []

    def __call__(self, turn: Turn) -> TurnOutput:
        if time.monotonic() < self.until:
            raise AgentUnavailable("the LangGraph server is down")
        self.ran.append(turn.text)
        return TurnOutput(replies=[f"You said: {turn.text}"])


def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tried again in place for a moment only, the person told at once: kept for later soon."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)


async def until(check: Any, seconds: float = 10) -> None:
    """Wait (at most ``seconds``) until ``check()`` holds."""
    for _ in range(int(seconds / 0.02)):
        if check():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("never came")
