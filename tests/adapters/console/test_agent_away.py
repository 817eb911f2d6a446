"""The chat while the agent is unreachable: the message is kept and tried again, "Working…" is
printed once for it, and ``/quit`` typed meanwhile leaves at once, saying what became of it."""

from __future__ import annotations

import asyncio
import io
import logging
import os
import pty
import time
from collections.abc import Iterator

import pytest

from clarigate.adapters.console import ConsoleAdapter
from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.retry import RetryPolicy
from clarigate.gateway.flow import outage
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.runners.base import AgentUnavailable
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests

WORKING = "⏳ Working…"
KEPT = "  ! The agent is unreachable right now. Your message is kept: I will answer once it is back.\n"
LEFT = (
    "  ! Left before your last message was answered. The chat keeps no message once it is closed:"
    " send it again after you start the chat again.\n"
)


class Away:
    """A scripted agent that is unreachable until ``until`` (monotonic), then echoes."""

    def __init__(self, seconds: float) -> None:
        self.until = time.monotonic() + seconds
        self.tries = 0

    def __call__(self, turn: Turn) -> TurnOutput:
        self.tries += 1
        if time.monotonic() < self.until:
            raise AgentUnavailable("the LangGraph server is down")
        return TurnOutput(replies=[f"You said: {turn.text}"])


@pytest.fixture(autouse=True)
def quick_retries(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tried again in place for a moment only, the person told at once: several deliveries soon."""
    monkeypatch.setattr(outage, "UNAVAILABLE_RETRY", RetryPolicy(first=0.05, cap=0.1, within=0.2))
    monkeypatch.setattr(outage, "NOTICE_AFTER", 0.05)


class Chat:
    """A started gateway with the console adapter and an agent away for a while."""

    def __init__(self, runner: asyncio.Runner, away: Away) -> None:
        self.runner = runner
        self.away = away
        self.out = io.StringIO()
        self.gateway = Gateway(config_for_tests(), MemoryStore(), ScriptedRunner(away))
        self.adapter = ConsoleAdapter(self.gateway, self.out, user="ada", language="en")
        self.gateway.register(self.adapter)
        runner.run(self.gateway.start())

    async def settle(self) -> None:
        await self.gateway.drain(timeout=60)


@pytest.fixture
def runner() -> Iterator[asyncio.Runner]:
    with asyncio.Runner() as made:
        yield made


def test_working_is_printed_once_while_the_message_is_kept_and_tried_again(
    runner: asyncio.Runner, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "clarigate.gateway.flow.turn")
    chat = Chat(runner, Away(2.0))
    try:
        with pytest.raises(Leave):
            ConsoleChat(chat.adapter, io.StringIO("hello\n"), runner.run, chat.settle).loop()
    finally:
        runner.run(chat.gateway.stop(grace=0))

    out = chat.out.getvalue()
    handed_back = [r for r in caplog.records if "kept for later" in r.getMessage()]
    assert len(handed_back) >= 2  # handed back twice or more: answered on a third delivery or later
    assert out.count(WORKING) == 1
    assert out.count(KEPT) == 1
    assert out.count("You said: hello") == 1
    assert out.index(WORKING) < out.index(KEPT) < out.index("bot> You said: hello")


def test_quit_typed_while_the_message_waits_for_the_agent_leaves_at_once(runner: asyncio.Runner) -> None:
    chat = Chat(runner, Away(600.0))
    keyboard, tty = pty.openpty()
    stdin = open(tty, encoding="utf-8")  # noqa: SIM115 (closed below)
    try:
        os.write(keyboard, b"hello\n")

        async def quit_once_kept() -> None:
            for _ in range(1000):
                if KEPT in chat.out.getvalue():
                    break
                await asyncio.sleep(0.01)
            os.write(keyboard, b"/quit\n")

        typing = runner.get_loop().create_task(quit_once_kept())
        started = time.monotonic()
        with pytest.raises(Leave):
            ConsoleChat(chat.adapter, stdin, runner.run, chat.settle).loop()
        assert typing.done()
        assert time.monotonic() - started < 10  # not after the wait for the agent
    finally:
        runner.run(chat.gateway.stop(grace=0))
        stdin.close()
        os.close(keyboard)

    out = chat.out.getvalue()
    assert out.endswith(KEPT + LEFT)
    assert "You said" not in out
