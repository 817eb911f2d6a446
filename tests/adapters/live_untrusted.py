"""Untrusted model text for the tests of what live updates send: a link labelled with another
host's address, mass mentions of every platform, a command to another bot, a run step (an
agent's progress line) longer than any status line or task title may be, and halves of UTF-16
pairs (an emoji streamed one half a piece, a lone half); and the readers that find the links a
platform would show in what it was sent."""

from __future__ import annotations

import re

from markdown_it import MarkdownIt

from clarigate.adapters.link_hosts import misleading_label
from clarigate.agent.events import Progress, TextDelta

DISGUISED = "[https://accounts.example.com/reset](https://evil.example/steal)"
HOSTILE = (
    f"Reset your password at {DISGUISED} right away, then tell @channel @here @everyone @all "
    '<!channel> <!here> <!subteam^S0TEAM|@oncall> <at user_id="all"></at> <at id=all></at> and '
    "tap /kick@group_admin_bot or /ask@clari_bot, or read [the guide](https://example.com/guide) now."
)
#: An agent's progress line: mass mentions, a link, and longer than a whole message may be.
LONG_STEP = "Paging @channel <!here> [accounts.example.com](https://evil.example/x) " + "and waiting " * 400


def hostile_run(pause: float = 0.12, step_for: float = 1.4) -> list[object]:
    """The events of a run that shows ``LONG_STEP`` for ``step_for`` seconds, then writes
    ``HOSTILE`` a word every ``pause`` seconds, and ends a little later, so that the last update
    shows what was written (a ``StreamingRunner`` plays them)."""
    events: list[object] = [Progress(LONG_STEP), step_for]
    for index, word in enumerate(HOSTILE.split(" ")):
        events += [TextDelta(("" if index == 0 else " ") + word, "m1"), pause]
    return [*events, step_for]


def markdown_links(markdown: str) -> list[tuple[str, str]]:
    """``(label as shown, target)`` of every link and image a CommonMark reader finds."""
    reader = MarkdownIt("commonmark")
    reader.validateLink = lambda url: True  # type: ignore[method-assign]  # every scheme is a link to some reader
    found: list[tuple[str, str]] = []
    for block in reader.parse(markdown):
        label: list[str] | None = None
        href = ""
        for token in block.children or []:
            if token.type == "link_open":
                label, href = [], str(token.attrs.get("href", ""))
            elif token.type == "link_close" and label is not None:
                found.append(("".join(label), href))
                label = None
            elif token.type == "image":
                found.append((token.content, str(token.attrs.get("src", ""))))
            elif label is not None and token.type in ("text", "code_inline"):
                label.append(token.content)
    return found


def mrkdwn_links(mrkdwn: str) -> list[tuple[str, str]]:
    """``(label, target)`` of every ``<target|label>`` link of Slack mrkdwn."""
    return [(label, href) for href, label in re.findall(r"<([^<>|]+)\|([^<>]*)>", mrkdwn)]


def html_links(html: str) -> list[tuple[str, str]]:
    """``(label, target)`` of every ``<a href>`` of Telegram HTML."""
    return [(label, href) for href, label in re.findall(r'<a href="([^"]+)">([^<]*)</a>', html)]


def misleading(links: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """The links whose label names another host than their target."""
    return [(label, href) for label, href in links if misleading_label(label, href)]


#: A reply whose emoji the model streams one half a piece (``halves_run``), a lone half in it too
#: (a model's JSON ``"\\ud83d"``); and what the person reads: the emoji whole, the lone half U+FFFD.
HALVES = "Deployed \ud83d\ude80 then \ud83d stopped."
HALVES_READ = "Deployed \U0001f680 then \ufffd stopped."


def halves_run(pause: float = 0.6) -> list[object]:
    """The events of a run showing a step with a lone half for a while, then writing ``HALVES``
    with a pause after each piece, an update's time, so that one may show the emoji's first half
    alone (a ``StreamingRunner`` plays them)."""
    pieces = ["Deployed", " \ud83d", "\ude80 then", " \ud83d stopped."]
    events: list[object] = [Progress("Checking \ud83d the rollout"), 1.2]
    for piece in pieces:
        events += [TextDelta(piece, "m1"), pause]
    return [*events, 0.4]


def half_pairs(text: str) -> list[str]:
    """The halves of UTF-16 pairs in ``text`` (none in anything a platform takes)."""
    return re.findall("[\ud800-\udfff]", text)
