"""What Telegram receives while a run is shown live (a draft in a private chat, an edited message
in a group) when the model writes a link labelled with another host's address, mass mentions and
commands to bots, and an agent's step is longer than a status line may be: each update renders the
text as the reply does (no link reads as one address and opens another, nobody is pinged, only
this bot's own commands stay tappable) and fits a message. Nor do halves of an emoji, streamed
one a piece, stop the updates."""

from __future__ import annotations

import re

import pytest

from clarigate.adapters.telegram.live import STATUS_CHARS
from clarigate.adapters.telegram.markup import MAX_MESSAGE_CHARS, html_to_plain, markdown_to_html
from clarigate.agent.harness import TurnOutput
from tests.gateway.flow.test_streaming import StreamingRunner

from ..live_untrusted import (
    HALVES,
    HALVES_READ,
    HOSTILE,
    half_pairs,
    halves_run,
    hostile_run,
    html_links,
    misleading,
)
from .fake_bot_api import Call
from .harness import mention_update, message_update
from .test_live import LIVE_METHODS, texts

#: An "@" Telegram would make a mention of (a word joiner after it: inert).
MENTION = re.compile(r"(?<![A-Za-z0-9_])@(?=\w)")


async def live_calls(tg, where: str) -> list[Call]:  # type: ignore[no-untyped-def]
    """The live updates and the reply's own call, once the hostile run played out in ``where``."""
    await tg.deliver(message_update("go") if where == "private" else mention_update("go"))
    return [call for call in tg.api.calls if call.method in LIVE_METHODS]


@pytest.mark.parametrize("where", ["private", "group"])
async def test_every_live_update_renders_untrusted_text_as_the_reply_does(bench, quick_groups, where):
    tg = await bench(StreamingRunner(hostile_run(pause=0.15), TurnOutput(replies=[HOSTILE])))
    calls = await live_calls(tg, where)

    written = [text for text in texts(calls[:-1]) if "Reset" in text]  # the answer, growing
    assert len(written) >= 2
    assert any('<a href="https://evil.example/steal">https://evil.example/steal</a>' in t for t in written)
    for text in texts(calls):
        assert misleading(html_links(text)) == [] and "accounts.example.com/reset" not in text, text
        assert not MENTION.search(text.replace("/ask@clari_bot", "/ask")), text  # nobody pinged
        assert "/kick@group_admin_bot" not in text  # another bot's command is never tappable
    # this bot's own command is tappable in the updates as in the reply
    assert all("/ask@clari_bot" in text for text in written if "/ask" in text), written
    assert texts(calls)[-1] == markdown_to_html(HOSTILE, "clari_bot")


async def test_a_step_longer_than_a_message_is_cut_and_the_updates_go_on(bench, quick_groups):
    tg = await bench(StreamingRunner(hostile_run(pause=0.15), TurnOutput(replies=[HOSTILE])))
    calls = await live_calls(tg, "group")

    assert all(len(text) <= MAX_MESSAGE_CHARS for text in texts(calls))  # none Telegram refuses
    step = [html_to_plain(t).replace("\u2060", "") for t in texts(calls) if "Paging" in t]  # (inert "@")
    assert step and all(len(t) <= STATUS_CHARS and t.endswith("…") for t in step), step
    assert len([t for t in texts(calls) if "Reset" in t]) >= 3  # the answer still grew live


@pytest.mark.parametrize("where", ["private", "group"])
async def test_an_emoji_streamed_in_halves_shows_whole_and_the_updates_go_on(bench, quick_groups, where):
    # the form encoding of a half raised UnicodeEncodeError: the live view stopped at it
    tg = await bench(StreamingRunner(halves_run(), TurnOutput(replies=[HALVES])))
    calls = await live_calls(tg, where)

    shown = texts(calls)
    assert "<i>🔄 Checking \ufffd the rollout</i>" in shown  # the step, its lone half U+FFFD
    assert "Deployed" in shown and any("Deployed 🚀" in text for text in shown[:-1]), shown
    assert not [text for text in shown if half_pairs(text) or "Deployed \ufffd" in text], shown
    assert shown[-1] == HALVES_READ  # the reply, as ever
