"""The chat on a real terminal (a pseudo-terminal here): commands answer while a run works,
lines pasted together are one message, and Ctrl-C during a run says what became of it."""

from __future__ import annotations

import asyncio
import io
import os
import pty
import select
import signal
from collections.abc import Iterator
from typing import Any

import pytest

from clarigate.adapters.console import ConsoleAdapter
from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.adapters.testing import ScriptedRunner, Turn
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.conftest import config_for_tests

STATUS = "Where this conversation stands:"
HELP = "Commands:"


class Terminal:
    """A started gateway with the console adapter, read from a pseudo-terminal."""

    def __init__(self, runner: asyncio.Runner) -> None:
        self.runner = runner
        self.out = io.StringIO()
        self.agent = ScriptedRunner(self.script)
        self.gateway = Gateway(config_for_tests(), MemoryStore(), self.agent)
        self.adapter = ConsoleAdapter(self.gateway, self.out, user="ada", language="en")
        self.gateway.register(self.adapter)
        runner.run(self.gateway.start())
        self.keyboard, tty = pty.openpty()
        self.stdin = open(tty, encoding="utf-8")  # noqa: SIM115 (closed by the fixture)
        self.reading: ConsoleChat | None = None

    async def script(self, turn: Turn) -> TurnOutput:
        """ "think" works until what the person typed meanwhile is read (or a long while has passed)."""
        if turn.text == "type meanwhile":  # the person types a command while the answer comes
            os.write(self.keyboard, b"/status\n")
            for _ in range(500):
                if STATUS in self.out.getvalue():
                    break
                await asyncio.sleep(0.01)
            os.write(self.keyboard, b"\x04")
        if turn.text == "slow, then Ctrl-C":  # the person presses Ctrl-C while it works
            await asyncio.sleep(0.1)
            os.kill(os.getpid(), signal.SIGINT)
        if turn.text.startswith("slow"):  # a long task: only a /cancel (or Ctrl-C) ends it early
            await asyncio.sleep(30)
        if turn.text == "think":
            for _ in range(500):
                answered = STATUS in self.out.getvalue() or HELP in self.out.getvalue()
                if answered or self.read_meanwhile():
                    break
                await asyncio.sleep(0.01)
        return TurnOutput(replies=[f"You said: {turn.text}"])

    def read_meanwhile(self) -> bool:
        """True when the chat holds lines typed while a run worked."""
        terminal = self.reading.terminal if self.reading is not None else None
        return terminal is not None and bool(terminal.early)

    def screen(self) -> str:
        """What the terminal itself has shown so far (its echo of the keys typed)."""
        shown = b""
        while select.select([self.keyboard], [], [], 0.1)[0]:
            shown += os.read(self.keyboard, 65536)
        return shown.decode("utf-8", "replace")

    def chat(self, typed: bytes) -> str:
        """The chat with ``typed`` waiting on the terminal, until its input ends; what was printed."""
        os.write(self.keyboard, typed)
        self.reading = ConsoleChat(self.adapter, self.stdin, self.runner.run, self.gateway.drain)
        with pytest.raises(Leave):
            self.reading.loop()
        return self.out.getvalue()


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    with asyncio.Runner() as runner:
        made = Terminal(runner)
        yield made
        runner.run(made.gateway.stop(grace=0))
        made.stdin.close()
        os.close(made.keyboard)


def test_status_typed_while_a_run_works_answers_before_the_run_ends(terminal: Terminal) -> None:
    out = terminal.chat(b"think\n/status\n\x04")

    assert STATUS in out
    assert "• Messages being worked on or waiting: 1." in out  # answered while "think" worked
    assert out.index(STATUS) < out.index("bot> You said: think")
    assert "You said: /status" not in out


def test_cancel_typed_while_a_run_works_stops_it_and_the_chat_goes_on(terminal: Terminal) -> None:
    out = terminal.chat(b"slow\n/cancel\n\x04")

    assert "Stopping the request in progress…" not in out  # the stopped line is the answer
    assert out.count("■ Stopped. What was already done stays done.") == 1
    assert "You said: slow" not in out and "Sorry" not in out
    assert "You said: next" in terminal.chat(b"next\n\x04")


def test_help_typed_while_a_run_works_names_quit_as_the_help_at_the_prompt(terminal: Terminal) -> None:
    out = terminal.chat(b"think\n/help\n\x04")

    during = out[: out.index("bot> You said: think")]  # answered while "think" worked
    assert "/help — how to talk to me, and the commands\n/quit — leave the chat\n" in during
    assert out.count("/quit — leave the chat") == 1
    assert "You said: /help" not in out


def test_what_is_typed_while_an_answer_comes_is_not_echoed_into_it(terminal: Terminal) -> None:
    out = terminal.chat(b"type meanwhile\n")

    assert STATUS in out  # the command typed meanwhile was read and answered
    shown = terminal.screen()
    assert "type meanwhile" in shown  # typed at the prompt: shown as typed
    assert "/status" not in shown  # typed while the answer came: not echoed into it


def test_lines_pasted_while_a_run_works_are_one_message_after_it(terminal: Terminal) -> None:
    out = terminal.chat(b"think\nfirst line\nsecond line\n/status\n\x04")

    assert "bot> You said: first line\nsecond line\n/status" in out  # one message, after the run
    assert out.index("bot> You said: think") < out.index("you> first line")
    assert "You said: first line\n" in out and "You said: second line" not in out


def test_arrow_keys_typed_while_a_run_works_are_not_part_of_the_message(terminal: Terminal) -> None:
    out = terminal.chat(b"think\ndeploy\x1b[D\x1b[C it\n/status\n\x04")

    assert "bot> You said: deploy it\n/status" in out
    assert "\x1b" not in out


@pytest.mark.usefixtures("terminal_ctrl_c")
def test_ctrl_c_during_a_run_stops_it_and_the_prompt_comes_back(terminal: Terminal) -> None:
    try:
        out = terminal.chat(b"slow, then Ctrl-C\nnext\n\x04")
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C during a run left the chat")

    assert out.count("■ Stopped. What was already done stays done.") == 1
    assert "Interrupted" not in out and "You said: slow" not in out and "Sorry" not in out
    assert "bot> You said: next" in out  # the chat went on: the next line was answered


def test_ctrl_c_during_a_run_says_the_answer_was_not_finished(terminal: Terminal) -> None:
    def pressed_ctrl_c(work: Any) -> Any:
        work.close()
        raise KeyboardInterrupt

    os.write(terminal.keyboard, b"hello\n")
    with pytest.raises(KeyboardInterrupt):
        ConsoleChat(terminal.adapter, terminal.stdin, pressed_ctrl_c, terminal.gateway.drain).loop()

    assert terminal.out.getvalue().endswith(
        "  ! Interrupted: stopped before the answer to your last message was finished"
        " (send it again to have it answered). Leaving the chat.\n"
    )
