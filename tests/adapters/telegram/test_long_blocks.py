"""Long blocks without spaces, character references and escapes, cut into Telegram messages.

A heading, quote or list item longer than a message and without a space (Chinese text) is cut
inside its text, not right after its marker, and each later message keeps the look; no message
ends inside ``&nbsp;`` or between a backslash and what it escapes; no message is empty once its
tags are parsed out (Telegram refuses it for good and the reply would be lost).
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from clarigate.adapters.telegram.live import live_html
from clarigate.adapters.telegram.markup import html_to_plain, markdown_to_html, split_markdown
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.events import TextDelta
from clarigate.agent.harness import TurnOutput
from clarigate.gateway.boundary.outbound_items import LiveView
from tests.gateway.flow.test_streaming import StreamingRunner

from ..code_samples import CODE_IN_BLOCKS, CODE_PIECES
from .harness import ALICE, message_update
from .test_render import assert_valid_html, pieces

ZH = "这是一段很长的引用文字没有空格" * 400  # 6,000 characters, no space: more than one message
#: What the first and each later message of a long block start with, rendered: a heading's or
#: quote's look kept on every piece; a list item's bullet (or number) only on its first: another
#: "•" or "1." would be an item that is not there, so its rest goes on as text.
LOOKS = {"# ": ("<b>", "<b>"), "> ": ("<blockquote>", "<blockquote>"), "- ": ("• ", "")}


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
    first, *later = _chat_shows(tg)
    assert later and first.startswith(LOOKS[marker][0]), [t[:20] for t in [first, *later]]
    looks = [text.startswith(LOOKS[marker][1]) and not text.startswith("•") for text in later]
    assert all(looks), [t[:20] for t in later]
    sent = [first, *later]
    assert "".join(_read(text) for text in sent) == ZH


def _numbers(html: str) -> list[str]:
    """The item numbers a message shows at its lines' starts."""
    return re.findall(r"^([0-9]+)\. ", html_to_plain(html), re.MULTILINE)


async def test_a_long_numbered_item_shows_its_number_once_and_the_next_item_its_own(bench):
    reply = f"1. 第一步\n2. 第二步\n3. {ZH}\n4. 第四步"
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("步骤"))
    sent = _chat_shows(tg)
    assert len(sent) > 1 and [number for text in sent for number in _numbers(text)] == ["1", "2", "3", "4"]
    assert "".join(_read(text) for text in sent) == _read(markdown_to_html(reply))


@pytest.mark.parametrize("item", ["3. ", "3) ", "10. "])
def test_the_rest_of_a_cut_numbered_item_starts_with_no_number(item: str) -> None:
    whole = f"{item}{'word ' * 100}\n{int(item[:-2]) + 1}. next"
    split = split_markdown(whole, 120)
    shown = [markdown_to_html(piece) for piece in split]
    assert len(shown) > 2 and shown[0].startswith(item) and all(_numbers(html) == [] for html in shown[1:-1])
    assert _numbers(shown[-1]) == [str(int(item[:-2]) + 1)]
    assert "".join(_read(html) for html in shown) == _read(markdown_to_html(whole))


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
    + ["\n", "\n\n", "\n# ", "\n> ", "\n- ", "\n\n## ", "\n\n> ", "\n1. ", "\n\n7) ", "\n12. "],
    1,
    400,
)


@settings(max_examples=60, deadline=None)
@given(long_blocks, st.sampled_from([120, 300, 700]))
@example("1. a\n12. " + "word " * 60 + "\n13. b", 120)  # a numbered item cut: its number read once
@example("word " * 24 + "\n+ ", 120)  # cut before a line that goes on the paragraph: its "+" is text
@example("word \n## " + "word " * 21 + "## word word", 120)  # no cut right after "##": a heading hid it
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


def _code_and_text(html: str) -> tuple[str, str]:
    """What a message shows as code (inside ``<pre>``) and as text, white space aside."""
    code = re.findall(r"<pre>(?:<code[^>]*>)?(.*?)(?:</code>)?</pre>", html, re.DOTALL)
    return _read("".join(code)), _read(re.sub(r"<pre>.*?</pre>", "", html, flags=re.DOTALL))


def _shown_apart(split: list[str]) -> tuple[str, str]:
    """The code and the text ``split`` shows, message after message."""
    shown = [_code_and_text(markdown_to_html(piece)) for piece in split]
    return "".join(code for code, _ in shown), "".join(text for _, text in shown)


@pytest.mark.parametrize(
    "code",
    CODE_IN_BLOCKS,
)
def test_code_cut_across_messages_stays_code_and_the_text_after_it_text(code: str) -> None:
    whole = f"Before it.\n\n{code}\n\nThe end, *not* code."
    for limit in range(60, 230):
        split = split_markdown(whole, limit)
        assert len(split) > 1 and all(len(markdown_to_html(piece)) <= limit for piece in split)
        assert _shown_apart(split) == _code_and_text(markdown_to_html(whole)), (limit, split)
        assert markdown_to_html(split[-1]).endswith("The end, <i>not</i> code.")


code_blocks = pieces(
    CODE_PIECES,
    1,
    300,
)


@settings(max_examples=150, deadline=None)
@given(code_blocks, st.sampled_from([80, 150, 300]))
@example("```\n> ", 80)  # a code line of a ">" alone is code, not a quote's blank line
@example("word " + "para text here. " * 8 + "```\nmore words here", 150)  # cut before an inline ```
@example("word " + "para text here. " * 9 + "```\nmore words here", 150)
def test_any_reply_with_code_splits_with_its_code_as_code_and_its_text_as_text(markdown: str, limit: int):
    split = [piece for piece in split_markdown(markdown, limit) if piece.strip()]  # as sent
    for piece in split:
        html = markdown_to_html(piece)
        assert len(html) <= limit
        assert_valid_html(html)
    code, text = _code_and_text(markdown_to_html(markdown))
    assert _shown_apart(split) == (code, text) or not code + text, split
    assert all(html_to_plain(markdown_to_html(piece)).strip() for piece in split)  # no message of nothing
    empty = sum(_empty_code_blocks(markdown_to_html(piece)) for piece in split)
    assert empty <= _empty_code_blocks(markdown_to_html(markdown)), split  # none the reply did not have


def _empty_code_blocks(html: str) -> int:
    """How many code blocks ``html`` shows with nothing in them."""
    return sum(1 for code in re.findall(r"<pre>(.*?)</pre>", html, re.DOTALL) if not _read(code))


#: A paragraph that fills a message up to the space before an inline "```" the model wrote.
_FULL_LINE = "word " + "para text here. " * 255 + "para text h"  # 4096 characters


@pytest.mark.parametrize("after", ["", "\nmore words here"])
async def test_a_cut_before_an_inline_fence_keeps_the_backticks_as_text(bench, after: str):
    reply = f"{_FULL_LINE} ```{after}"
    tg = await bench(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await tg.deliver(message_update("hi"))
    sent = _chat_shows(tg)
    assert len(sent) == 2 and all("<pre>" not in text for text in sent), sent  # no code it did not have
    assert html_to_plain(sent[0]) == _FULL_LINE  # the cut right before the backticks
    assert html_to_plain(sent[1]) == f"```{after}"  # the backticks and the line after, as text
