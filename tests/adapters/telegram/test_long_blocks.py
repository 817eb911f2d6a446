"""Long blocks without spaces, character references and escapes, cut into Telegram messages.

A heading, quote or list item longer than a message and without a space (Chinese text) is cut
inside its text, not right after its marker, and each later message keeps the look; no message
ends inside ``&nbsp;`` or between a backslash and what it escapes; no message is empty once its
tags are parsed out (Telegram refuses it for good and the reply would be lost).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.telegram.live import live_html
from clarigate.adapters.telegram.markup import html_to_plain, markdown_to_html, split_markdown
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.events import TextDelta
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.messages import LiveView
from tests.gateway.flow.test_streaming import StreamingRunner

from .harness import ALICE, message_update
from .test_render import assert_valid_html, pieces

ZH = "这是一段很长的引用文字没有空格" * 400  # 6,000 characters, no space: more than one message
#: What each message of a long block starts with, rendered: its look kept on every piece.
LOOKS = {"# ": "<b>", "> ": "<blockquote>", "- ": "• ", "1. ": "1. "}


def _chat_shows(tg) -> list[str]:
    """The texts Alice's chat shows, oldest first (messages Telegram accepted)."""
    return [text for (chat, _), (text, _) in sorted(tg.api.messages.items()) if chat == ALICE["id"]]


def _read(html: str) -> str:
    """What a person reads, white space and bullets aside."""
    return re.sub(r"[\s•]", "", html_to_plain(html))


@pytest.mark.parametrize("marker", list(LOOKS))
async def test_a_long_heading_quote_or_list_item_without_spaces_arrives_whole_in_its_look(bench, marker):
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[marker + ZH])), streaming="off")
    await tg.deliver(message_update("引用一下"))
    refused = [call.params.get("text") for call in tg.api.of("sendMessage") if call.result is None]
    assert refused == []
    sent = _chat_shows(tg)
    assert len(sent) > 1 and all(text.startswith(LOOKS[marker]) for text in sent), [t[:20] for t in sent]
    assert "".join(_read(text) for text in sent).replace("1.", "") == ZH


@pytest.mark.parametrize("marker", ["# ", "> ", "- "])
def test_the_draft_of_a_long_block_shows_its_text_not_only_the_cut_mark(marker: str) -> None:
    html = live_html(LiveView(mode="draft", text=marker + ZH, status="⏳ Working…"))
    assert len(html) <= 4096 and html.endswith("\n…\n\n<i>⏳ Working…</i>")
    assert _read(html).startswith(ZH[:1000])


async def test_a_streamed_long_heading_reaches_the_draft_and_then_the_chat(bench):
    reply = "# " + ZH
    events: list[object] = [TextDelta(reply[:3000], "m1"), 1.2, TextDelta(reply[3000:], "m1"), 1.2]
    tg = await bench(StreamingRunner(events, TurnOutput(replies=[reply])))
    await tg.deliver(message_update("写个长标题"))
    drafts = [str(call.params["text"]) for call in tg.api.of("sendMessageDraft")]
    assert drafts and all(_read(text).removesuffix("…⏳Working…").removesuffix("…") for text in drafts)
    assert "".join(_read(text) for text in _chat_shows(tg)) == ZH


async def test_no_message_is_cut_inside_a_character_reference(bench):
    reply = "价格&nbsp;100元；" * 1200  # a price list a model wrote with non-breaking spaces
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("价格表"))
    sent = [html_to_plain(text) for text in _chat_shows(tg)]
    assert len(sent) > 1 and "".join(sent) == html_to_plain(markdown_to_html(reply))


@pytest.mark.parametrize("unit", ["&nbsp;价", "&#169;价", "&#xA9;价", "\\*价", "\\&价", "\\\\价"])
def test_no_piece_ends_inside_a_reference_or_an_escape(unit: str) -> None:
    whole = unit * 200
    for limit in range(60, 90):
        split = split_markdown(whole, limit)
        assert "".join(html_to_plain(markdown_to_html(piece)) for piece in split) == html_to_plain(
            markdown_to_html(whole)
        ), (limit, split)


async def test_an_empty_heading_before_a_long_paragraph_is_not_a_message_of_its_own(bench):
    intro = "a" * 4095  # a full message: the empty heading would start the next one
    reply = f"{intro}\n\n#\n\n" + "很长的段落" * 1000
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("hi"))
    assert all(call.result is not None for call in tg.api.of("sendMessage"))
    assert "".join(_read(text) for text in _chat_shows(tg)) == intro + "很长的段落" * 1000


@pytest.mark.parametrize("reply", ["#", ">", "```\n```"])
async def test_a_reply_that_would_render_empty_arrives_as_written(bench, reply: str):
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("hi"))
    assert [html_to_plain(text) for text in _chat_shows(tg)] == [reply]


def test_a_line_cut_before_a_marker_does_not_start_a_heading_quote_or_list() -> None:
    for unit in ("a # b ", "a > b ", "a - b ", "a 12. b ", "x&>y "):
        whole = unit * 400
        split = split_markdown(whole, 300)
        assert _read("".join(markdown_to_html(piece) for piece in split)) == _read(markdown_to_html(whole))


# Text of few spaces (Chinese), references, escapes and the markers of long blocks.
long_blocks = pieces(
    ["这是一段没有空格的文字", "字", "&nbsp;", "&amp;", "&#169;", "\\*", "\\\\", "<&>", " ", "word "]
    + ["\n", "\n\n", "\n# ", "\n> ", "\n- ", "\n\n## ", "\n\n> "],
    1,
    400,
)


@settings(max_examples=60, deadline=None)
@given(long_blocks, st.sampled_from([120, 300, 700]))
def test_any_reply_splits_into_readable_messages_that_fit(markdown: str, limit: int) -> None:
    split = [piece for piece in split_markdown(markdown, limit) if piece.strip()]  # as sent
    shown = [markdown_to_html(piece) for piece in split]
    for html in shown:
        assert len(html) <= limit
        assert_valid_html(html)  # Telegram's tags only, every one closed: no cut inside a tag
        assert html_to_plain(html).strip(), split  # something to read (Telegram refuses none)
    # no cut inside a reference or an escape, nothing lost: the same text, read message by message
    whole = _read(markdown_to_html(markdown))
    assert "".join(_read(html) for html in shown) == whole or not whole  # (none: sent as written)
