"""A long reply cut into Feishu cards, or a text cut to a limit (a card's chat-list preview), never
splits a character as a person sees it: an emoji sequence (a family, a skin tone, a flag, a
keycap), a letter and its accent. Where no space is near (Chinese text, a run of emoji) the cut
moves back to where that character starts; every card still fits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.markup import cut, split_reply
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput

from ..emoji_text import AT_THE_CUT, emoji_texts, whole
from .cards import text_of
from .events import message_event


@settings(max_examples=80, deadline=None)
@given(emoji_texts, st.sampled_from([16, 33, 120, 500]))
def test_any_emoji_and_chinese_text_is_cut_within_the_limit_never_inside_a_character(
    text: str, limit: int
) -> None:
    chunks = split_reply(text, limit)
    assert all(len(chunk) <= limit and whole(chunk) for chunk in chunks), chunks
    assert "".join(chunks) == text
    shortened = cut(text, limit)
    assert len(shortened) <= limit and whole(shortened.removesuffix("…")), shortened


@pytest.mark.parametrize("store", ["memory"], indirect=True)
@pytest.mark.parametrize("sequence", AT_THE_CUT)
async def test_a_sequence_at_the_cut_of_a_long_reply_arrives_whole_on_the_next_card(
    make_bot, sequence: str
) -> None:
    replies = ["中" * 3999 + sequence + "文" * 5, "中" * 98 + sequence + "文"]  # a card: 4,000 characters
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=replies)), streaming="off")
    await bot.deliver(message_event("写一段长文"))
    await bot.gateway.drain()
    cards = bot.api.shown()
    assert [text_of(card) for card in cards] == ["中" * 3999, sequence + "文" * 5, replies[1]]
    # the chat list's preview of a card: 100 characters at most
    assert cards[2]["config"]["summary"]["content"] == "中" * 98 + "…"
