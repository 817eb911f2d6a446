"""What Feishu receives while a run is shown live (a CardKit streaming card, or an ordinary card
edited where CardKit is refused) when the model writes a link labelled with another host's address
and mass mentions, and an agent's step is far longer than a line: as in the reply, no link reads
as one address and opens another, no ``<at>`` reaches Feishu, and every update fits a card. Nor do
halves of an emoji, streamed one a piece, stop the updates."""

from __future__ import annotations

import json

import pytest

from clarigate.adapters.feishu.render import CARD_LIMIT_BYTES, card_size, render_reply
from clarigate.agent.harness import TurnOutput
from tests.gateway.flow.test_streaming import StreamingRunner

from ..live_untrusted import (
    HALVES,
    HALVES_READ,
    HOSTILE,
    half_pairs,
    halves_run,
    hostile_run,
    markdown_links,
    misleading,
)
from .cards import text_of
from .events import message_event
from .test_live import bodies, streamed


@pytest.mark.parametrize("cardkit", [True, False], ids=["streaming card", "edited card"])
async def test_every_live_update_shows_untrusted_text_as_the_reply_does(make_bot, cardkit):
    bot = await make_bot(StreamingRunner(hostile_run(), TurnOutput(replies=[HOSTILE])))
    bot.api.refuse_cardkit = not cardkit
    await bot.deliver(message_event("how do I get back in?"))
    await bot.gateway.drain(timeout=30)

    edits = [text_of(call.card()) for call in bot.api.patched()[:-1]]  # the reply's own edit left out
    updates = streamed(bot.api) if cardkit else edits
    written = [text for text in updates if text.startswith("Reset")]
    assert len(written) >= 2 and any("Paging" in text for text in updates)
    for text in updates:
        assert misleading(markdown_links(text)) == [] and "accounts.example.com" not in text, text
    honest = ("https://evil.example/steal", "https://evil.example/steal")  # its target as its label
    assert any(honest in markdown_links(text) for text in written)
    sent = bodies(bot.api.calls)
    assert "<at" not in sent and "\\u003cat" not in sent  # shown as text ("&#60;at"), never a mention
    cards = [json.loads(c.body["data"]) for c in bot.api.cardkit_calls("create")] + [
        c.card() for c in bot.api.patched()
    ]
    assert cards and all(card_size(card) <= CARD_LIMIT_BYTES for card in cards)
    assert [text_of(card) for card in bot.api.shown()] == [text_of(card) for card in render_reply(HOSTILE)]


@pytest.mark.parametrize("cardkit", [True, False], ids=["streaming card", "edited card"])
async def test_an_emoji_streamed_in_halves_shows_whole_and_the_updates_go_on(make_bot, cardkit):
    # the SDK's encoding of a half raised UnicodeEncodeError: the card stopped at "Deployed"
    bot = await make_bot(StreamingRunner(halves_run(), TurnOutput(replies=[HALVES])))
    bot.api.refuse_cardkit = not cardkit
    await bot.deliver(message_event("how did the deploy go?"))
    await bot.gateway.drain(timeout=30)

    edits = [text_of(call.card()) for call in bot.api.patched()[:-1]]  # the reply's own edit left out
    updates = streamed(bot.api) if cardkit else edits
    assert "Deployed" in updates and any(text.startswith("Deployed 🚀") for text in updates), updates
    assert not [text for text in updates if half_pairs(text) or "Deployed \ufffd" in text], updates
    assert "Checking \ufffd the rollout" in bodies(bot.api.calls)  # the step, its lone half U+FFFD
    assert [text_of(card) for card in bot.api.shown()] == [HALVES_READ]  # the reply, as ever
