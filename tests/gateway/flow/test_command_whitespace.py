"""A command whose words follow a line break, a tab or a full-width space is still the command."""

from __future__ import annotations

import pytest

from clarigate.adapters.testing import ScriptedRunner
from clarigate.gateway.flow.commands import Command, parse_command
from clarigate.gateway.store.base import Store


@pytest.mark.parametrize("typed", ["/help\n怎么用", "／help\u3000怎么用", "/help\t怎么用"])
async def test_help_with_its_words_after_other_whitespace_is_still_help(store: Store, make_gateway, typed):
    runner = ScriptedRunner()
    gateway, chat = await make_gateway(store, runner)

    await chat.say(typed)
    await gateway.drain()

    assert runner.calls == [], "a command went to the agent as a request"
    assert chat.texts()[0].startswith("直接告诉我您需要什么。"), chat.texts()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("/help\n怎么用", Command("help", "怎么用")),
        ("／cancel\u3000不要了", Command("cancel", "不要了")),
        ("/start\tpayload", Command("start", "payload")),
        ("/help@clarigate_bot\n how  now ", Command("help", "how  now")),
        ("/ help", None),  # a slash and a word, not a command
    ],
)
def test_the_words_follow_any_whitespace(text: str, expected: Command | None):
    assert parse_command(text) == expected
