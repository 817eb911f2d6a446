"""The console platform against the real core: typed lines in, what the core sends printed.

The agent is scripted (``ScriptedRunner``); everything between the terminal and it is the
gateway as every platform uses it, on the embedded store.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Callable
from typing import TextIO

import pytest

from clarigate.adapters.console.receive import ConsoleChat, Leave
from clarigate.adapters.testing import ScriptedRunner, Turn, asking, choice_request, form_request
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import FormField, Option

from .console_bot import ConsoleBot

FIELDS = [
    FormField(name="name", label="Project name", type="text", required=True),
    FormField(name="size", label="Team size", type="number"),
    FormField(
        name="language",
        label="Language",
        type="select",
        options=[Option(id="py", label="Python", value="python"), Option(id="go", label="Go", value="go")],
    ),
]

# a typed interrupt's bounds, as its schema sets them (``test_field_bounds``)
BOUNDED = [
    FormField(name="title", label="Title", type="text", required=True, bounds={"maxLength": 8}),
    FormField(
        name="guests", label="Guests", type="number", bounds={"minimum": 1, "maximum": 10, "multipleOf": 1}
    ),
    FormField(name="note", label="Note", type="text"),
]


def script(turn: Turn) -> TurnOutput:
    """Asks for a database or a form when told to; otherwise says what it received."""
    if turn.response is None and turn.text == "which database?":
        return asking(choice_request("Which database?", ["PostgreSQL", "SQLite"]))
    if turn.response is None and turn.text == "wipe the test data":
        request = choice_request("Delete the test data?", ["No, keep it", "Yes, delete everything"])
        return asking(request.model_copy(update={"clarification_type": "risk_confirmation"}))
    if turn.response is None and turn.text == "create a project":
        return asking(form_request("Tell me about the project.", FIELDS))
    if turn.response is None and turn.text in ("plan a trip", "计划一次旅行"):
        request = form_request("Plan the trip.", BOUNDED)
        return asking(request.model_copy(update={"locale": "zh" if turn.text != "plan a trip" else "en"}))
    if turn.response is not None:
        return TurnOutput(replies=[f"Answered {turn.response.response_kind}: {turn.response.value}"])
    return TurnOutput(replies=[f"You said: {turn.text}"])


class Bot(ConsoleBot):
    """A started gateway with the console adapter on the scripted agent."""

    def __init__(self, runner: asyncio.Runner) -> None:
        super().__init__(runner, ScriptedRunner(script))


def test_a_typed_number_answers_through_the_core(bot: Bot) -> None:
    out = bot.chat("which database?", "2")

    assert "  1. PostgreSQL\n  2. SQLite" in out
    assert "bot> Answered option: SQLite" in out
    assert bot.adapter.open is None  # the core closed the question
    assert bot.agent.calls[-1].response is not None and bot.agent.calls[-1].response.option_id == "option-2"


@pytest.mark.parametrize(
    "stdin",
    [
        # a UTF-8 locale: Python's stdin is strict, and its read would raise (losing the line)
        lambda typed: io.TextIOWrapper(io.BytesIO(typed), encoding="utf-8", errors="strict"),
        # C or POSIX: the byte comes as a lone surrogate, which no JSON can hold
        lambda typed: io.TextIOWrapper(io.BytesIO(typed), encoding="utf-8", errors="surrogateescape"),
        lambda typed: io.StringIO(typed.decode("utf-8", "surrogateescape")),  # a stream of its own
    ],
    ids=["strict", "surrogateescape", "text"],
)
def test_a_line_not_in_the_terminals_encoding_reaches_the_agent_with_replacement_characters(
    bot: Bot, stdin: Callable[[bytes], TextIO]
) -> None:
    # a Latin-1 terminal, or a file piped in: "café" as one byte 0xE9
    with pytest.raises(Leave):
        ConsoleChat(bot.adapter, stdin(b"hello\ncaf\xe9 please\n"), bot.runner.run, bot.gateway.drain).loop()

    assert [call.text for call in bot.agent.calls] == ["hello", "caf\ufffd please"]
    assert "bot> You said: caf\ufffd please" in bot.out.getvalue()


def test_a_message_that_is_not_an_answer_closes_the_question_and_goes_to_the_agent(bot: Bot) -> None:
    out = bot.chat("which database?", "delete the test data")

    assert "(the open question is closed: this goes to the agent as a new request)" in out
    assert "bot> You said: delete the test data" in out
    assert bot.agent.calls[-1].response is None


def test_a_form_is_asked_field_by_field_and_submitted_to_the_core_as_one_answer(bot: Bot) -> None:
    out = bot.chat("create a project", "", "atlas", "many", "12", "Go")

    assert out.count("  Project name (required): ") == 2  # empty: asked again
    assert out.count("  Team size [a number]: ") == 2  # "many" is not a number
    response = bot.agent.calls[-1].response
    assert response is not None and response.response_kind == "form"
    assert response.values == {"name": "atlas", "size": 12, "language": "go"}  # typed by the core
    assert bot.adapter.open is None


def test_status_in_a_form_answers_and_asks_the_field_again(bot: Bot) -> None:
    out = bot.chat("create a project", "/status")

    assert "bot> Where this conversation stands:" in out
    assert "• Waiting for an answer to “Tell me about the project.”" in out
    assert out.count("  Project name (required): ") == 2
    assert len(bot.agent.calls) == 1  # a command never reaches the agent


def test_cancel_in_a_form_declines_it_and_the_agent_is_told(bot: Bot) -> None:
    out = bot.chat("create a project", "atlas", "/cancel")

    assert "bot> ✖ Cancelled the question “Tell me about the project.”" in out
    response = bot.agent.calls[-1].response
    assert response is not None and response.response_kind == "declined"
    assert bot.adapter.open is None


def test_new_in_a_form_starts_a_new_conversation(bot: Bot) -> None:
    first_thread = None

    async def thread() -> str | None:
        return await bot.gateway.store.thread_of_chat(bot.adapter.conversation.thread_key)

    bot.chat("create a project")
    first_thread = bot.runner.run(thread())
    out = bot.chat("/new", "hello")

    assert "bot> Started a new conversation. What can I do for you?" in out
    assert "bot> You said: hello" in out
    assert bot.runner.run(thread()) != first_thread
    assert bot.agent.calls[-1].thread_id != bot.agent.calls[0].thread_id


def test_help_names_the_terminals_own_quit(bot: Bot) -> None:
    out = bot.chat("/help")

    assert "/new — start a new conversation (closes the open question)" in out
    assert out.rstrip().endswith("/quit — leave the chat\nyou>")
    # the terminal has no buttons and asks a form field by field: its help says so
    assert "bot> Just write what you need." in out and "field by field" in out
    assert "button" not in out and "name: value" not in out


@pytest.mark.parametrize("typed", ["/help@bot", "／help", "/HELP now"])
def test_every_spelling_of_help_names_quit(bot: Bot, typed: str) -> None:
    out = bot.chat(typed)

    assert "/new — start a new conversation (closes the open question)" in out  # the core's /help
    assert out.rstrip().endswith("/quit — leave the chat\nyou>")


def test_help_as_a_plain_word_is_a_request_without_the_quit_line(bot: Bot) -> None:
    out = bot.chat("help")

    assert "bot> You said: help" in out and "/quit —" not in out


def test_a_typed_go_ahead_pick_asks_its_own_confirm_and_then_answers(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "2", "confirm")

    assert "bot> Reply “confirm” to go ahead with “Yes, delete everything”" in out  # the core asks
    assert "bot> Answered option: Yes, delete everything" in out
    assert bot.adapter.open is None
    assert bot.agent.calls[-1].response is not None and bot.agent.calls[-1].response.option_id == "option-2"


def test_anything_but_confirm_keeps_the_risk_question_open(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "yes, delete everything", "maybe later")

    dropped = "bot> Not confirmed, so “Yes, delete everything” was not chosen; the question is still open."
    assert dropped in out
    assert [c.response for c in bot.agent.calls] == [None]  # the agent got no answer
    assert bot.adapter.open is not None  # still open: "1" would answer it now


def test_a_command_instead_of_confirm_works_and_the_pick_still_waits(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "2", "/status")

    assert "bot> Where this conversation stands:" in out  # the command answered
    assert [c.response for c in bot.agent.calls] == [None]  # the agent got no answer
    assert bot.adapter.open is not None
    bot.chat("confirm")  # as on every platform: the pick waits for its "confirm"
    assert bot.agent.calls[-1].response is not None and bot.agent.calls[-1].response.option_id == "option-2"


def test_cancel_instead_of_confirm_closes_the_question(bot: Bot) -> None:
    out = bot.chat("wipe the test data", "2", "/cancel")

    assert "bot> ✖ Cancelled the question “Delete the test data?”" in out
    assert "Not confirmed" not in out  # the question is closed, not "still open"
    response = bot.agent.calls[-1].response
    assert response is not None and response.response_kind == "declined"
    assert bot.adapter.open is None


def test_piped_input_reads_one_turn_per_line(bot: Bot) -> None:
    """Piped input is not echoed by a terminal: the line read is printed after its prompt."""
    out = bot.chat("which database?", "2", "create a project", "atlas")

    assert out.startswith("you> which database?\n  ⏳ Working…\n")
    assert "you> 2\n  ⏳ Working…\nbot> Answered option: SQLite\nyou> create a project\n" in out
    assert "  Project name (required): atlas\n" in out
    assert "you> bot>" not in out
