"""A long reply cut into Telegram messages, or a label cut to a button, never splits a character as
a person sees it: an emoji sequence (a family, a skin tone, a flag, a keycap), a letter and its
accent. Where no space is near (Chinese text, a run of emoji) the cut moves back to where that
character starts; every message still fits."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.telegram.markup import markdown_to_html, split_markdown
from clarigate.adapters.telegram.render import render_question
from clarigate.adapters.telegram.send import TelegramSender
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import normalize_request

from ..emoji_text import AT_THE_CUT, FAMILY, THUMBS, emoji_texts, whole
from .harness import ALICE, message_update


@settings(max_examples=80, deadline=None)
@given(emoji_texts, st.sampled_from([16, 33, 120, 500]))
def test_any_emoji_and_chinese_text_splits_within_the_limit_never_inside_a_character(
    text: str, limit: int
) -> None:
    split = split_markdown(text, limit)
    assert all(len(markdown_to_html(piece)) <= limit for piece in split)
    assert all(whole(piece) for piece in split), split
    assert "".join(split) == text  # nothing lost, nothing added


@pytest.mark.parametrize("sequence", AT_THE_CUT)
async def test_a_sequence_at_the_cut_of_a_long_reply_arrives_whole_in_the_next_message(
    bench, sequence: str
) -> None:
    reply = "中" * 4095 + sequence + "文" * 5  # the 4,096th character is its first code point
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("写一段长文"))
    sent = [text for (chat, _), (text, _) in sorted(tg.api.messages.items()) if chat == ALICE["id"]]
    assert sent == ["中" * 4095, sequence + "文" * 5]


@pytest.mark.parametrize("sequence", [FAMILY, THUMBS])
def test_a_long_option_label_is_cut_before_a_sequence_not_inside_it(sequence: str) -> None:
    label = "a" * 58 + sequence + " and then some more words"  # 60 characters shown at most
    request = normalize_request({"question": "Which one?", "options": [label, "Neither"]}, "call-1")
    keyboard = render_question(request, "AbCdEfGhIjKlMnOp").reply_markup
    shown = keyboard.inline_keyboard[0][0].text  # type: ignore[union-attr]
    assert shown == "a" * 58 + "…"


class _RecordingBot:
    """Takes ``answerCallbackQuery`` as the Bot API would, keeping the text shown on the tap."""

    text: str | None = None

    async def answer_callback_query(
        self, callback_id: str, text: str | None = None, show_alert: bool = False
    ):
        self.text = text
        return True


@pytest.mark.parametrize("sequence", AT_THE_CUT)
async def test_a_taps_answer_is_cut_to_200_before_a_sequence_not_inside_it(sequence: str) -> None:
    bot = _RecordingBot()
    sender = TelegramSender(bot, moves=None)  # type: ignore[arg-type]  # (no chat moves to follow)
    await sender.answer_callback("q1", "a" * 199 + sequence + " more")
    assert bot.text == "a" * 199
