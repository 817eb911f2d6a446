"""A risk confirmation asked as a form, in the terminal: an answer that goes ahead (a ticked
checkbox, an option that is not the safe choice), typed or kept as shown with Enter, reaches the
agent only after "confirm", as a typed pick does on every platform; anything else sends nothing
and the form is asked again. The console chat against the real core, a scripted agent."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from clarigate.adapters.testing import ScriptedRunner, Turn, asking
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from .console_bot import ConsoleBot

BACKUPS = {"name": "delete_backups", "label": "Delete the backups", "type": "checkbox", "default": True}
ACTION = {
    "name": "action",
    "type": "select",
    "options": ["Drop the table", "Keep it"],
    "default": "Drop the table",
}
FORMS: dict[str, list[dict[str, Any]]] = {"checkbox": [BACKUPS], "select": [ACTION], "two": [ACTION, BACKUPS]}
ANSWERS = {
    "checkbox": {"delete_backups": True},
    "select": {"action": "Drop the table"},
    "two": {"action": "Drop the table", "delete_backups": True},
}


class Bot(ConsoleBot):
    """The console chat on an agent that asks the risk form ``kind`` when told "clean up"."""

    def __init__(self, runner: asyncio.Runner, kind: str) -> None:
        def script(turn: Turn) -> TurnOutput:
            if turn.response is not None:
                return TurnOutput(replies=[f"Answered: {turn.response.values}"])
            spec = {"question": "Clean up?", "clarification_type": "risk_confirmation", "fields": FORMS[kind]}
            return asking(normalize_request(spec, "call-clean"))

        super().__init__(runner, ScriptedRunner(script))

    @property
    def answers(self) -> list[Any]:
        return [c.response.values for c in self.agent.calls if c.response is not None]


@pytest.fixture
def make_bot() -> Iterator[Callable[[str], Bot]]:
    with asyncio.Runner() as runner:
        made: list[Bot] = []

        def make(kind: str) -> Bot:
            made.append(Bot(runner, kind))
            return made[-1]

        yield make
        for bot in made:
            runner.run(bot.gateway.stop(grace=0))


@pytest.mark.parametrize("kind", list(FORMS))
def test_enter_on_a_default_that_goes_ahead_asks_for_confirm_first(
    make_bot: Callable[[str], Bot], kind: str
) -> None:
    bot = make_bot(kind)
    out = bot.chat("clean up", *[""] * len(FORMS[kind]))
    assert bot.answers == []  # Enter decided nothing
    assert "bot> Reply “confirm” to go ahead with" in out  # the input ended there: nothing sent
    bot.chat(*[""] * len(FORMS[kind]), "confirm")  # the form asked again, kept as shown, confirmed
    assert bot.answers == [ANSWERS[kind]]


def test_anything_but_confirm_sends_nothing_and_asks_the_form_again(make_bot: Callable[[str], Bot]) -> None:
    bot = make_bot("checkbox")
    out = bot.chat("clean up", "yes", "sure")
    assert bot.answers == []
    assert "Not confirmed, so “Delete the backups: yes” was not chosen" in out
    assert out.count("  Delete the backups [yes/no]") == 2  # the form is asked again
    out = bot.chat("yes", "confirm")
    assert bot.answers == [ANSWERS["checkbox"]]
    assert "bot> Answered: {'delete_backups': True}" in out


def test_a_command_instead_of_confirm_works_and_sends_nothing(make_bot: Callable[[str], Bot]) -> None:
    bot = make_bot("checkbox")
    out = bot.chat("clean up", "", "/cancel")
    assert [c.response.response_kind for c in bot.agent.calls if c.response] == ["declined"]
    assert bot.adapter.open is None and "Delete the backups: yes" in out


@pytest.mark.parametrize(("kind", "typed"), [("checkbox", ["no"]), ("select", ["2"]), ("two", ["2", "no"])])
def test_the_safe_answer_is_sent_at_once(make_bot: Callable[[str], Bot], kind: str, typed: list[str]) -> None:
    bot = make_bot(kind)
    out = bot.chat("clean up", *typed)
    assert len(bot.answers) == 1 and "confirm" not in out
