"""Slack renderer: long replies and Markdown from the model (split from ``test_render.py``)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.slack.markup import markdown_to_mrkdwn
from clarigate.adapters.slack.render import render_reply

from .test_render import broadcasts_read


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["word", "a & b", "<b>", "[docs](https://example.com/x?a=1&b=2)", "中文字符", "x" * 700]
        ),
        min_size=3,
        max_size=20,
    ),
    st.integers(400, 800),
)
def test_a_long_paragraph_splits_between_words_never_inside_an_entity_or_a_link(words: list[str], times: int):
    paragraph = " ".join(words * times)  # one line, far over one message
    chunks = render_reply(paragraph)
    assert len(chunks) > 1 and all(len(c) <= 3900 for c in chunks)
    for chunk in chunks:
        assert not re.search(r"&(?!amp;|lt;|gt;)", chunk), "an entity was cut in two"
        for control in re.findall(r"<[^>]*>?", chunk):
            assert re.fullmatch(r"<https://example\.com/x\?a=1&amp;b=2\|docs>", control), control
    # Nothing lost, nothing cut mid-word.
    assert " ".join(c.strip() for c in chunks) == markdown_to_mrkdwn(paragraph)


markdownish = st.lists(
    st.sampled_from(
        list("ab *_~`[]()<>&|@!#>-\n")
        + ["```", "**", "https://x.y", "[l](https://a.b/?q=1&r=2)", "@here", "<!channel>", "here", "\n\n"]
        + ["https://x.y/@here", "[l](mailto:ops@channel.io)", "ops@here.io", ".io"]
    ),
    max_size=200,
).map("".join)


@settings(max_examples=200, deadline=None)
@given(markdownish)
def test_markdown_from_the_model_never_pings_or_smuggles_control_sequences(markdown: str):
    for chunk in render_reply(markdown):
        assert len(chunk) <= 4000
        for control in re.findall(r"<[^>]*>?", chunk):
            assert re.fullmatch(r"<(https?://|mailto:)[^<>|]*\|[^<>]*>", control), control
        assert not broadcasts_read(chunk), chunk


def test_commonmark_blocks_become_mrkdwn():
    source = "\n".join(
        [
            "## **Setup** steps",
            "1. install",
            "   - with `uv`",
            "2. run https://x.example/a_b_c",
            "",
            "> quoted *line*",
            "> > and more",
            "",
            "[](https://a.b) ![logo](https://img.example/l.png) [x](tg://resolve)",
        ]
    )
    assert markdown_to_mrkdwn(source).split("\n") == [
        "*Setup steps*",  # mrkdwn cannot nest bold in bold
        "1. install",
        "  • with `uv`",
        "2. run https://x.example/a_b_c",
        "",
        "&gt; quoted _line_",
        "&gt; and more",
        "",
        "<https://a.b|https://a.b> <https://img.example/l.png|logo> x",
    ]
