"""Long replies cut into messages: within the limit, never inside a character, a link or an entity, code
fenced in every piece, no piece empty and no empty code block the source did not have."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from clarigate.adapters.slack.live import PIECE_CHARS, piece_end
from clarigate.adapters.slack.markup import cut, cut_escaped, markdown_to_mrkdwn, split_mrkdwn
from clarigate.adapters.slack.render import render_reply
from clarigate.adapters.slack.stream_text import link_start

from ..code_samples import CODE_PIECES, STRAY_FENCE
from ..emoji_text import AT_THE_CUT, emoji_texts, whole


def test_a_link_longer_than_a_message_becomes_its_label_and_address_never_half_a_link():
    url = "https://files.example.com/report.pdf?sig=" + "Ab3" * 1400  # a signed download link
    chunks = render_reply(f"Here it is: [download]({url})")
    assert len(chunks) == 2 and all(len(c) <= 3900 and _controls_closed(c) for c in chunks)
    assert chunks[0].startswith("Here it is: download (https://files.example.com/report.pdf?sig=Ab3")
    assert "".join(chunks) == f"Here it is: download ({url})"  # the address, cut only where it must be

    label = "the quarterly report with every table and chart " * 90
    chunks = render_reply(f"See [{label.strip()}](https://example.com/q3).")
    assert len(chunks) == 2 and all(len(c) <= 3900 and _controls_closed(c) for c in chunks)
    assert " ".join(chunks) == f"See {label.strip()} (https://example.com/q3)."  # cut between words
    assert render_reply("[docs](https://example.com/x) " * 3) == [
        "<https://example.com/x|docs> " * 2 + "<https://example.com/x|docs>"
    ]


_link_words = st.text(alphabet="ab &<>*|@", max_size=12)
_links = st.builds(
    lambda label, path, times: f"[{label * times}](https://x.example/{path * times})",
    _link_words,
    st.text(alphabet="ab/?=&%_", max_size=12),
    st.integers(1, 60),
)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_links | _link_words | st.sampled_from([" ", "\n", "```\n", "`a`"]), max_size=30),
    st.integers(30, 500),
)
def test_any_text_splits_into_pieces_within_the_limit_with_every_link_closed(parts: list[str], limit: int):
    for chunk in split_mrkdwn(markdown_to_mrkdwn("".join(parts)), limit):
        assert len(chunk) <= limit
        assert _controls_closed(chunk), chunk


# --- never a cut inside a character as a person sees it (an emoji sequence, a flag, a letter and
# its accent): replies split into messages, text cut to a limit, a chat stream's pieces


@settings(max_examples=80, deadline=None)
@given(emoji_texts, st.sampled_from([20, 41, 120, 500]))
def test_any_emoji_and_chinese_text_is_cut_within_the_limit_never_inside_a_character(text: str, limit: int):
    chunks = split_mrkdwn(markdown_to_mrkdwn(text), limit)
    assert all(len(chunk) <= limit and whole(chunk) for chunk in chunks), chunks
    assert "".join(chunks) == text
    for shortened in (cut(text, limit), cut_escaped(text, limit)):
        assert len(shortened) <= limit and whole(shortened.removesuffix("…")), shortened


@settings(max_examples=80, deadline=None)
@given(emoji_texts, st.sampled_from([16, 40]))
def test_a_streams_pieces_of_emoji_and_chinese_text_are_whole_characters(text: str, room: int):
    start, pieces = 0, []
    while start < len(text):
        end = link_start(text, start, min(len(text), start + room))
        assert start < end <= start + room
        pieces.append(text[start:end])
        start = end
    assert all(whole(piece) for piece in pieces), pieces


@pytest.mark.parametrize("sequence", AT_THE_CUT)
def test_a_sequence_at_the_cut_goes_whole_to_the_next_message_or_after_the_ellipsis(sequence: str):
    # the 3,892nd character (a message's room once a code fence may be closed) is its first code point
    assert render_reply("中" * 3891 + sequence + "文" * 5) == ["中" * 3891, sequence + "文" * 5]
    assert cut("中" * 73 + sequence + "文", 75) == "中" * 73 + "…"
    assert cut_escaped("a & b " + "中" * 63 + sequence + "文", 75) == "a &amp; b " + "中" * 63 + "…"
    text = "中" * (PIECE_CHARS - 1) + sequence + "文"  # a stream's piece ends before it
    assert piece_end(text, 0) == PIECE_CHARS - 1


@pytest.mark.parametrize(
    ("written", "sent"), [("中中👨\u200d", "中中"), ("中中🇯", "中中"), ("中中🇯🇵🇫", "中中🇯🇵")]
)
def test_a_stream_holds_back_a_character_still_being_written(written: str, sent: str):
    # a joiner or half a flag at the end of what the model wrote so far: the rest is still to come
    assert written[: piece_end(written, 0)] == sent


# --- long replies split into messages: a cut numbered item, and code holding a stray "```"


def test_the_rest_of_a_cut_numbered_item_starts_with_no_number():
    chunks = split_mrkdwn(markdown_to_mrkdwn(f"1. first\n2. second\n3. {'word ' * 100}\n4. fourth"), 120)
    numbers = [re.findall(r"^([0-9]+)\. ", chunk, re.MULTILINE) for chunk in chunks]
    assert len(chunks) > 2 and [number for found in numbers for number in found] == ["1", "2", "3", "4"]


def _read(mrkdwn: str) -> str:
    """What a person reads, white space, quote marks and the zero-width space that breaks a "```"
    shown as written aside (a quote's every line starts with "&gt;", its code's lines too)."""
    return re.sub(r"[\s\u200b]|&gt;", "", mrkdwn)


def _code_and_text(mrkdwn: str) -> tuple[str, str]:
    """What a message shows as code (between "```" pairs) and as text (``_read``)."""
    parts = mrkdwn.split("```")
    assert len(parts) % 2, mrkdwn  # every code block closed in its message
    return _read("".join(parts[1::2])), _read("".join(parts[0::2]))


def _shown_apart(chunks: list[str]) -> tuple[str, str]:
    shown = [_code_and_text(chunk) for chunk in chunks]
    return "".join(code for code, _ in shown), "".join(text for _, text in shown)


def _written_code(markdown: str) -> str:
    """The code blocks the model wrote, as ``_read`` reads them."""
    tokens = MarkdownIt("commonmark").disable(["reference", "html_block", "html_inline"]).parse(markdown)
    blocks = [token.content for token in tokens if token.type in ("fence", "code_block")]
    return re.sub(r"[\s>]", "", "".join(blocks))


@pytest.mark.parametrize(
    "code",
    [
        STRAY_FENCE,  # indented code holding a ``` line
        "````\n" + STRAY_FENCE.replace("    ", "") + "\n````",  # a fenced block holding one
        "1. ````\n" + STRAY_FENCE.replace("    ", "   ") + "\n   ````",  # a fence right after "1."
        "```\n" + "step " * 40 + "```\nmore code\n```",  # a line ending in ```, cut before it
    ],
)
def test_code_holding_a_fence_line_stays_code_in_every_message_and_the_text_after_it_text(code: str):
    whole = f"Before it.\n\n{code}\n\nThe end, *not* code."
    assert _code_and_text(markdown_to_mrkdwn(whole))[0] == _written_code(whole)
    for limit in [*range(40, 230), 3900]:
        chunks = split_mrkdwn(markdown_to_mrkdwn(whole), limit)
        assert all(len(chunk) <= limit for chunk in chunks)
        assert _shown_apart(chunks) == _code_and_text(markdown_to_mrkdwn(whole)), (limit, chunks)
        assert chunks[-1].endswith("The end, _not_ code.")


code_blocks = st.lists(
    st.sampled_from([*CODE_PIECES, "``"]),
    min_size=1,
    max_size=300,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(code_blocks, st.sampled_from([40, 120, 300]))
@example("word word word \n> ```\n", 40)  # an empty quoted block cut between its fences
@example("word " * 9 + "\n\n> ```\n> quoted code\n> ```", 60)  # the quoted fence the last line to fit
def test_any_reply_with_code_splits_into_messages_each_with_its_code_blocks_closed(markdown: str, limit: int):
    whole = markdown_to_mrkdwn(markdown)
    chunks = split_mrkdwn(whole, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert _shown_apart(chunks) == _code_and_text(whole)  # nothing moved between code and text
    assert _code_and_text(whole)[0] == _written_code(markdown)  # the code shows as code, all of it
    assert all(chunk.strip() for chunk in chunks)  # no message of nothing
    assert sum(map(_empty_code_blocks, chunks)) <= _empty_code_blocks(whole), chunks  # none added


def test_a_quoted_code_block_whose_fence_is_the_last_line_to_fit_goes_whole_to_the_next_message():
    markdown = "a" * 3870 + "\n\n> ```\n> quoted code\n> ```"
    chunks = render_reply(markdown)
    assert all(len(chunk) <= 3900 for chunk in chunks)
    assert chunks == ["a" * 3870, "&gt; ```\n&gt; quoted code\n&gt; ```"]
    assert "\n\n".join(chunks) == markdown_to_mrkdwn(markdown)  # nothing lost, nothing added


def test_a_long_quoted_code_block_reopens_in_its_quote():
    chunks = split_mrkdwn(
        markdown_to_mrkdwn("> ```\n" + "".join(f"> line {n}\n" for n in range(40)) + "> ```"), 120
    )
    assert len(chunks) > 2 and all(len(chunk) <= 120 for chunk in chunks)
    assert all(line.startswith("&gt;") for chunk in chunks[1:] for line in chunk.split("\n")[:-1])


def _empty_code_blocks(mrkdwn: str) -> int:
    """How many code blocks ``mrkdwn`` shows with nothing in them ("```\n```"; in a quote, a line
    of "&gt;" alone is blank; out of one, it is a ">" the code shows)."""
    parts = mrkdwn.split("```")
    pairs = zip(parts[0::2], parts[1::2], strict=False)  # each code block and the text before it
    return sum(1 for before, code in pairs if not (_read(code) if before.endswith("&gt; ") else code.strip()))


@pytest.mark.parametrize("limit", [80, 200, 3900])
def test_paragraphs_then_a_code_block_cut_at_its_fence_show_no_empty_code_block(limit: int):
    # every size of the text before the code: one of them puts the cut right after the fence
    code = "\n".join(f"UPDATE accounts SET plan = 'pro' WHERE id = {n}; -- moved" for n in range(30))
    for pad in range(1, limit + 80):
        markdown = f"First, a paragraph.\n\nThen {'w' * pad}.\n\n```sql\n{code}\n```\n\nThe end."
        chunks = split_mrkdwn(markdown_to_mrkdwn(markdown), limit)
        wrong = [chunk for chunk in chunks if _empty_code_blocks(chunk) or not chunk.strip()]
        assert wrong == [], pad
        assert _shown_apart(chunks) == _code_and_text(markdown_to_mrkdwn(markdown))


def _controls_closed(mrkdwn: str) -> bool:
    """Every ``<`` of the markup is closed by its ``>`` (no half link)."""
    return re.fullmatch(r"(?:[^<>]|<[^<>]*>)*", mrkdwn) is not None
