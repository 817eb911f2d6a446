"""What a Slack chat stream carries of the model's text, piece by piece (``stream_text``,
``live.piece_end``, ``stream_question.closing_chunks``): no piece ends inside a link or code span
still being written, and no unsafe link target reaches Slack, whatever the steps the text comes in.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from clarigate.adapters.markdown import SAFE_SCHEMES
from clarigate.adapters.slack.live import STREAM, TASK_TITLE_LIMIT, piece_end, task_changes
from clarigate.adapters.slack.stream_question import closing_chunks
from clarigate.adapters.slack.stream_text import stream_piece
from clarigate.gateway.boundary.messages import MessageRef

from ..live_untrusted import LONG_STEP, markdown_links, misleading


def test_streamed_pieces_never_end_inside_a_link_still_written():
    assert piece_end("see [Re-auth", 0) == len("see ")
    assert piece_end("see [Re-authorize here]", 0) == len("see ")  # "(" may follow
    assert piece_end("see [reset](javascript:alert(1", 0) == len("see ")
    assert piece_end("see [reset](https://a.b) now", 0) == len("see [reset](https://a.b) ")
    assert piece_end("x [a] b ", 0) == len("x [a] b ")  # a "]" with text after it closes nothing
    long = "see [" + "word " * 100  # never held back for good
    assert piece_end(long, 0) == len(long)


def test_streamed_addresses_keep_their_broadcast_words_and_the_text_around_them_does_not():
    assert stream_piece("see [docs](https://example.com/@here/x) @here") == (
        "see [docs](https://example.com/@here/x) @\u200bhere"
    )
    assert stream_piece("open https://example.com/@channel") == "open https://example.com/@channel"
    assert stream_piece("[write](mailto:ops@channel.io) or x@here.com") == (
        "[write](mailto:ops@channel.io) or x@here.com"
    )
    assert (
        stream_piece("[https://x.y/@here](https://x.y/@here)")
        == "[https://x.y/@\u200bhere](https://x.y/@here)"
    )
    # a piece never ends inside what may become "@here": the address began in the piece before
    assert stream_piece("@here/x and @here", "see https://example.com/") == "@here/x and @\u200bhere"
    assert stream_piece("@here.com", "write ops") == "@here.com"
    assert stream_piece("@here", "see ") == "@\u200bhere"
    assert stream_piece("/x @here", "see @here") == "/x @\u200bhere"  # what went before stays gone


def test_a_held_stream_closes_with_unsafe_links_as_their_labels():
    ref = MessageRef(
        platform="slack", chat_id="C1", message_id="1.1", extra={"live": STREAM, "streamed": "4"}
    )
    text = "See [the fix](tg://resolve?domain=evil) and [docs](https://example.com/d)."
    chunks = closing_chunks(ref, text)
    assert "".join(c["text"] for c in chunks) == "the fix and [docs](https://example.com/d)."


def _unsafe_hrefs(markdown: str) -> list[str]:
    """The link and image targets a CommonMark reader finds in ``markdown`` that are not safe."""
    reader = MarkdownIt("commonmark")
    reader.validateLink = lambda url: True  # every scheme is a link to some reader
    tokens = [t for block in reader.parse(markdown) for t in [block, *(block.children or [])]]
    hrefs = [
        str(t.attrs.get("href") or t.attrs.get("src") or "")
        for t in tokens
        if t.type in ("link_open", "image")
    ]
    return [href for href in hrefs if not href.lower().startswith(SAFE_SCHEMES)]


_markdown_links = st.lists(
    st.sampled_from(
        [
            "a",
            " ",
            "\n",
            "[",
            "]",
            "(",
            ")",
            "!",
            "<",
            "`",
            "[x](",
            "](",
            "slack://app?x=1",
            "javascript:alert(1)",
        ]
        + ["https://a.b/c", "tg://resolve", "[ok](https://a.b)", "[bad](slack://x)", "](<tg:x>)"]
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_markdown_links, st.data())
def test_a_stream_written_in_any_steps_never_carries_an_unsafe_link(text: str, data: st.DataObject):
    steps = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    streamed, start = [], 0
    for grown in sorted(steps):  # the text as written so far at each update
        end = piece_end(text[:grown], start)
        if end > start:
            streamed.append(stream_piece(text[start:end], text[:start]))
            start = end
    ref = MessageRef(platform="slack", chat_id="C1", message_id="1.1", extra={"streamed": str(start)})
    streamed += [c["text"] for c in closing_chunks(ref, text)]  # the rest, as a held stream ends
    assert not _unsafe_hrefs("".join(streamed)), streamed


@pytest.mark.parametrize(
    "text",
    [
        "`\n \n[bad](slack://x)`",  # a line of spaces ends the paragraph: no code span crosses it
        "```[bad](slack://x)`",  # a backtick after the fence's info: no fence, still being written
        "aaa`[x](slack://x)``",  # the closing backticks grew: no code span
        "[x](<https://a.b/c)",  # a "<" never closed: the target starts with it, not with https
        "`[x](slack://x)`](`",  # a "](" no "[" opens: no link, its backtick kept (the span stays code)
        "[`]`](<tg:x>)",  # a "]" in code inside the label: the "[" still opens a link
    ],
)
def test_text_that_only_later_proves_not_code_never_streams_a_live_unsafe_link(text: str):
    for steps in [
        (),
        *((i,) for i in range(len(text) + 1)),
        *itertools.combinations(range(len(text) + 1), 2),
    ]:
        streamed, start = [], 0
        for grown in steps:
            end = piece_end(text[:grown], start)
            if end > start:
                streamed.append(stream_piece(text[start:end], text[:start]))
                start = end
        ref = MessageRef(platform="slack", chat_id="C1", message_id="1.1", extra={"streamed": str(start)})
        streamed += [c["text"] for c in closing_chunks(ref, text)]
        assert not _unsafe_hrefs("".join(streamed)), (steps, streamed)


@pytest.mark.parametrize("written", [1, 7, 40])  # characters the model adds per update
def test_code_streams_as_written_while_a_link_outside_it_loses_its_unsafe_target(written: int):
    text = (
        "Call `handlers[i](event)` for each, then:\n\n```js\nhandlers[0](ev);\nconst f = a[1](b);\n```\n"
        "and [reset it](javascript:alert(1)) or ``x[k](y)``."
    )
    streamed, start = [], 0
    for grown in range(written, len(text) + written, written):
        end = piece_end(text[:grown], start)
        if end > start:
            streamed.append(stream_piece(text[start:end], text[:start]))
            start = end
    ref = MessageRef(platform="slack", chat_id="C1", message_id="1.1", extra={"streamed": str(start)})
    shown = "".join(streamed + [c["text"] for c in closing_chunks(ref, text)])
    assert shown == text.replace("[reset it](javascript:alert(1))", "reset it")


_labelled_links = st.lists(
    st.sampled_from(
        ["a", " ", "\n", "[", "]", "(", ")", "`", "*", "<", ">", "](", "accounts.example.com", "evil.example"]
        + ["https://", "https://evil.example/x", "https://accounts.example.com/r", "[x](slack://x)"]
        + ["[accounts.example.com](https://evil.example/x)", "[docs](https://evil.example/d)"]
    ),
    max_size=30,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(_labelled_links, st.data())
def test_a_stream_written_in_any_steps_never_carries_a_link_labelled_with_another_host(
    text: str, data: st.DataObject
):
    steps = data.draw(st.lists(st.integers(0, len(text)), max_size=8))
    streamed, start = [], 0
    for grown in sorted(steps):
        end = piece_end(text[:grown], start)
        if end > start:
            streamed.append(stream_piece(text[start:end], text[:start]))
            start = end
    ref = MessageRef(platform="slack", chat_id="C1", message_id="1.1", extra={"streamed": str(start)})
    shown = "".join(streamed + [c["text"] for c in closing_chunks(ref, text)])
    assert not misleading(markdown_links(shown)) and not _unsafe_hrefs(shown), shown


def test_a_step_shows_as_a_task_title_within_slacks_limit_pinging_nobody():
    chunks, extra = task_changes({}, "🔄 " + LONG_STEP)
    (title,) = [c["title"] for c in chunks]
    assert len(title) <= TASK_TITLE_LIMIT and title.endswith("…")
    assert "@channel" not in title and "<!" not in title and not misleading(markdown_links(title))
    ref = MessageRef(platform="slack", chat_id="C1", message_id="1.1", extra={**extra, "streamed": "0"})
    (closing,) = closing_chunks(ref, "")  # the step completed as a held stream ends
    assert closing["title"] == title and closing["status"] == "complete"
