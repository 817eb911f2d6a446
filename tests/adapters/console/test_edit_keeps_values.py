"""Edit in the terminal keeps what the person did not change: the console chat against the real
core and the real LangGraph agent (scripted model), with a tool recording its exact arguments."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agent import approval_tools as tools

from .console_bot import ConsoleBot


class Terminal(ConsoleBot):
    """The bot with the console adapter; ``chat`` types lines until the input ends."""

    def __init__(self, runner: asyncio.Runner, tmp_path: Path) -> None:
        super().__init__(runner, tools.approval_runner(tmp_path))


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
