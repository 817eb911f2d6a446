"""An agent thread's title (``assistant.threads.setTitle``) is its first request's first line
with words, as the README promises: a code block's fence or a line of symbols is no title."""

from __future__ import annotations

import pytest

from .conftest import MakeWorld

AGENT = {"agent_view": True}


@pytest.mark.parametrize(
    ("request_text", "title"),
    [
        (
            "```\nTraceback (most recent call last):\n```\nwhy does the deploy fail?",
            "Traceback (most recent call last):",
        ),
        ("```python\nimport os\n```", "import os"),
        ("---\n\nplan the deploy", "plan the deploy"),
        ("```ls -la``` shows nothing", "```ls -la``` shows nothing"),  # code on the line: its words
        ("🚀🚀", "🚀🚀"),  # no line with words: the first line all the same
    ],
)
async def test_a_thread_is_titled_by_its_first_line_with_words(
    make_world: MakeWorld, request_text: str, title: str
):
    world = await make_world(slack=AGENT)
    _, ts = await world.user.dm(request_text)
    await world.settle()
    assert world.fake.agent.titles[("D1", ts)] == title  # not "```" in the list of conversations
