"""A reply's links to schemes markdown-it refuses (``javascript:``, ``vbscript:``, ``file:``,
``data:``) show their labels alone on Slack and Telegram, as ``slack://`` or ``tg://`` links do:
never the raw ``[label](javascript:…)`` the model wrote. Code keeps what it shows."""

from __future__ import annotations

import pytest

from clarigate.adapters.slack.render import render_reply
from clarigate.adapters.telegram.markup import markdown_to_html

TARGETS = [
    "javascript:alert(document.cookie)",
    "JavaScript:alert(1)",
    "vbscript:msgbox(1)",
    "file:///etc/passwd",
    "data:text/html;base64,PHNjcmlwdD4=",
    "slack://app?team=T1",
    "tg://resolve?domain=evil",
]


@pytest.mark.parametrize("target", TARGETS)
def test_slack_shows_the_label_of_an_unsafe_link(target: str):
    (shown,) = render_reply(f"Please [reset it]({target}) or read [the guide](https://example.com/g).")
    assert shown == "Please reset it or read <https://example.com/g|the guide>."


@pytest.mark.parametrize("target", TARGETS)
def test_telegram_shows_the_label_of_an_unsafe_link_or_image(target: str):
    shown = markdown_to_html(
        f"Please [reset it]({target}), see ![the chart]({target}) or [docs](https://a.b/d)."
    )
    assert shown == 'Please reset it, see the chart or <a href="https://a.b/d">docs</a>.'


def test_code_keeps_a_link_written_in_it():
    (slack,) = render_reply("Run `[x](javascript:go())` as is")
    assert slack == "Run `[x](javascript:go())` as is"
    assert markdown_to_html("Run `[x](javascript:go())`") == "Run <code>[x](javascript:go())</code>"
