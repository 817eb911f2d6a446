"""Edit in the terminal keeps what the person did not change: the console chat against the real
core and the real LangGraph agent (scripted model), with a tool recording its exact arguments."""

from __future__ import annotations

import asyncio
import io
from collections.abc import Iterator
from pathlib import Path

import pytest

from clarigate.adapters.console import ConsoleAdapter
from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.gateway.flow.intake import Gateway
from clarigate.gateway.store.memory import MemoryStore
from tests.agent import approval_tools as tools
from tests.conftest import config_for_tests


class Terminal:
    """The bot with the console adapter; ``chat`` types lines until the input ends."""

    def __init__(self, runner: asyncio.Runner, tmp_path: Path) -> None:
        self.runner = runner
        self.agent = tools.approval_runner(tmp_path)
        self.gateway = Gateway(config_for_tests(), MemoryStore(), self.agent)
        self.out = io.StringIO()
        self.adapter = ConsoleAdapter(self.gateway, self.out, user="ada", language="en")
        self.gateway.register(self.adapter)
        runner.run(self.gateway.start())

    def chat(self, *typed: str) -> str:
        stdin = io.StringIO("".join(line + "\n" for line in typed))
        with pytest.raises(Leave):
            ConsoleChat(self.adapter, stdin, self.runner.run, self.gateway.drain).loop()
        return self.out.getvalue()


@pytest.fixture
def terminal(tmp_path: Path) -> Iterator[Terminal]:
    tools.CALLS.clear()
    with asyncio.Runner() as runner:
        made = Terminal(runner, tmp_path)
        yield made
        runner.run(made.gateway.stop(grace=0))
        runner.run(made.agent.aclose())


def _answers(changes: dict[str, str]) -> list[str]:
    """Enter on every field, or the value in ``changes``, in the order the form asks them."""
    order = list(tools.ARGS)  # the scripted call's arguments, in the order the model sent them
    return [changes.get(name, "") for name in order]


def test_enter_on_every_field_runs_the_original_call(terminal: Terminal) -> None:
    printed = terminal.chat("clean up the test data", "Edit", *_answers({}))
    assert "dry_run [yes/no] (now yes; Enter keeps it): " in printed
    assert "limit [a number] (now 100; Enter keeps it): " in printed
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed(tools.ARGS)]
    assert "Finished." in printed


def test_one_typed_field_changes_only_that_argument(terminal: Terminal) -> None:
    terminal.chat("clean up the test data", "Edit", *_answers({"table": "prod_data"}))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "table": "prod_data"})]


def test_no_for_dry_run_is_an_edit(terminal: Terminal) -> None:
    terminal.chat("clean up the test data", "Edit", *_answers({"dry_run": "no"}))
    assert [tools.typed(c) for c in tools.CALLS] == [tools.typed({**tools.ARGS, "dry_run": False})]


def test_reject_never_runs_the_tool(terminal: Terminal) -> None:
    printed = terminal.chat("clean up the test data", "Reject")
    assert tools.CALLS == [] and "Finished." in printed
