"""Model text in card markdown as a person reads it: code as written, no tag, and a long reply's
later cards starting with the text they continue.

Feishu's guide (rich text, JSON 2.0) reads card markdown as CommonMark with some inline HTML
(``<at id=all></at>``, ``<font>``…): a ``<`` outside code is written as the entity "&#60;" so that
model text never mentions anyone, but a code span or block shows what it holds as written, an
entity there included, so there the ``<`` stays. Cut mid-line, a card must not start with a
heading, list, quote or rule the reply had as text inside its line."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from clarigate.adapters.feishu.live import live_markdown
from clarigate.adapters.feishu.markup import escape_markdown, split_reply
from clarigate.adapters.feishu.render import render_answered, render_clarification, render_notice
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import HumanInputRequest, normalize_request
from clarigate.gateway.boundary.outbound_items import LiveView

from .cards import code_read, components, tags_read, text_of
from .events import message_event
from .test_render import _parse, _shown_apart

REPLY = (
    "Declare it as `List<String> names`, then render it:\n\n"
    '```html\n<ul class="names">\n  <li>{{ name }}</li>&lt;\n</ul>\n```\n\n'
    "and tell <at id=all></at> (or <at user_id=\"ou_x\">) <font color='red'>done</font>."
)


@pytest.mark.parametrize("store", ["memory"], indirect=True)
async def test_code_in_a_reply_shows_its_angle_brackets_as_written_and_text_no_tag(make_bot):
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=[REPLY])), streaming="off")
    await bot.deliver(message_event("how do I list the names?"))
    await bot.gateway.drain()
    [shown] = [text_of(card) for card in bot.api.shown()]
    assert code_read(shown) == [
        "List<String> names",
        '<ul class="names">\n  <li>{{ name }}</li>&lt;\n</ul>\n',  # as written, its "&lt;" too
    ]
    assert tags_read(shown) == []  # nobody mentioned, nothing restyled
    assert "tell &#60;at id=all>&#60;/at> (or &#60;at user_id=" in shown  # shown as text


@pytest.mark.parametrize(
    "text",
    [
        "| `a | <at id=all></at> | b` |\n| - | - | - |",  # a table cuts the span at its "|"
        "intro `<at id=all></at>\n| a | ` |\n| - | - |",  # the table ends the paragraph first
        "| a |\n| - |\n`y\nz` `<at id=all></at>`",  # rows go on without a "|"
        "    `x\n<at id=all></at> `",  # indented code, or a paragraph and a span
        "`<at id=all></at>",  # a span never closed
        "[a](x:`) <at id=all></at> `",  # a link's target takes the backtick
        "[a](<`>) <at id=all></at> `",  # "<" in a target: escaped, the link read again
        "```\n<at id=all></at>\n```\n<at id=all></at>",
        "~~~ `<at id=all></at>`\n~~~\n<font color=red>x</font>",
        "> ```\n> <at id=all></at>\n\n<at id=all></at>",
        "- ```\n  <at id=all></at>\n  ```\n<at id=all></at>",
    ],
)
def test_no_reading_of_the_card_finds_a_tag_however_code_is_nested(text: str):
    assert tags_read(escape_markdown(text)) == [], escape_markdown(text)


_PIECES = [
    *("<at id=all></at>", "<", "<b>", "`", "``", "```", "~~~", "|", " | ", "\n| - | - |\n", "\n", "\n\n"),
    *("    ", "\n    ", "- ", "> ", "1. ", "[a](", "](<", ")", "x:", "word", "代码", "\\", "&#60;"),
    *("https://x.cn", "。", "见"),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
@example("`<at id=all></at>`")
@example("https://x.cn`。`")  # no space put between the address and the "。" of the code after it
def test_any_model_text_reads_with_no_tag_and_its_plain_code_as_written(text: str):
    shown = escape_markdown(text)
    assert tags_read(shown) == [], (text, shown)
    if "|" not in text and "    " not in text and "](" not in text:  # no table, indented code, link
        assert code_read(shown) == code_read(text), (text, shown)


FENCED_AT_ALL = "```\n<at id=all></at>\n```"  # code alone; after text on its line, not code


def test_model_text_after_other_text_on_its_line_is_read_there_and_shows_no_tag():
    request = normalize_request(
        {"question": FENCED_AT_ALL, "fields": [{"name": "n", "label": FENCED_AT_ALL, "type": "text"}]}, "c"
    )
    card = render_clarification(request, "AbCdEfGhIjKlMnOp", "fallback")
    notice = render_notice(FENCED_AT_ALL, to="ou_alice")  # in a group: it mentions them alone
    for shown in [c["content"] for c in components(card, "markdown")] + [text_of(notice)]:
        assert tags_read(shown.replace("<at id=ou_alice></at>", "")) == [], shown


def test_a_live_card_typed_out_shows_no_tag_at_any_point_and_fenced_code_as_written():
    text = f"Use `<at id=all></at>` or `List<T>`:\n\n```java\nList<String> names;\n```\n\n{FENCED_AT_ALL}"
    shown = live_markdown(LiveView(mode="card", text=text, status="🔧 <font color=red>x</font>"))
    assert all(tags_read(shown[:end]) == [] for end in range(len(shown) + 1))  # each part typed
    assert code_read(shown)[2:] == ["List<String> names;\n", "<at id=all></at>\n"]  # blocks as written


def test_an_answered_card_cut_to_fit_shows_no_tag_its_cut_code_span_held():
    request = HumanInputRequest(
        request_id="clarification:c", tool_call_id="c", question="Q?", context="word " * 7000
    )  # too big for a card with its answer: the question and the answer cut short
    line = "✅ Answered by ou_alice: `" + "<at id=all></at> " * 200 + "`"
    card = render_answered(request, line, "ou_alice")
    [_, answer] = [c["content"] for c in components(card, "markdown")]
    assert len(answer) < len(line) and answer.startswith("✅ Answered by <at id=ou_alice></at>: `")
    assert tags_read(answer) == ["<at id=ou_alice>", "</at>"] * 4  # the answerer, in every reading


def test_a_bare_url_in_code_keeps_the_cjk_text_after_it_in_prose_it_gets_a_space():
    text = '见https://example.com说明\n\n```python\nprint("访问https://example.com获取")\n```'
    shown = escape_markdown(text)
    assert code_read(shown) == ['print("访问https://example.com获取")\n']  # the code as written
    assert shown.startswith("见https://example.com 说明")  # the link does not swallow the prose


# --- a long reply cut mid-line: the next card starts with the text it continues


FILLED = "word " * 28 + "abcdefghi "  # 150 characters: a card of 150 is cut at their last space


CUT_BEFORE = ["# tail", "## tail", "- tail", "+ tail", "* tail", "> tail", "1. tail", "2) tail"]


@pytest.mark.parametrize("rest", [*CUT_BEFORE, "- - -\ntail", "***\ntail"])
def test_a_card_cut_before_an_inline_marker_starts_with_it_as_text(rest: str):
    first, second = split_reply(FILLED + rest, 150)
    assert first == FILLED.strip()
    assert _parse(second)[0].type == "paragraph_open", second  # no heading, list, quote or rule
    assert html.unescape(second) == rest  # the characters as written


def test_a_cut_at_a_line_end_keeps_the_list_item_the_reply_had_there():
    chunks = split_reply("- one " + "word " * 28 + "\n- two\n- three", 150)
    assert len(chunks) == 2 and chunks[1] == "- two\n- three"


@pytest.mark.parametrize("store", ["memory"], indirect=True)
async def test_the_second_card_of_a_reply_cut_before_a_hash_shows_it_as_text(make_bot):
    reply = "word " * 799 + "abcd # 1 is the issue to fix first."  # a card holds 4,000: up to "abcd"
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await bot.deliver(message_event("what first?"))
    await bot.gateway.drain()
    shown = [text_of(card) for card in bot.api.shown()]
    assert len(shown) == 2 and shown[0] == "word " * 799 + "abcd"
    assert [t.type for t in _parse(shown[1])][:2] == ["paragraph_open", "inline"]
    assert html.unescape(shown[1]) == "# 1 is the issue to fix first."


_MARKED = [
    *("word ", "word ", "word ", "# ", "## ", "- ", "> ", "1. ", "12) ", "+ ", "* ", "`", "\n", "\n\n")
]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(_MARKED), min_size=1, max_size=200).map("".join), st.sampled_from([40, 90]))
@example(FILLED + "1. tail", 150)
@example(FILLED + "> tail", 150)
@example("word word word word word word word # # \n+ ", 40)  # a "+" going on the paragraph: text
@example("word word word word word word word word \n1. ", 40)  # the "1." too: text, not an item
@example("word " * 15 + "\n12) # ", 40)  # an item of an empty heading would hide the "#"
@example("word \n## word word word word word ## word word ", 40)  # no cut right after "##"
@example("# word word word word word word word word \n1. ", 40)  # a heading's rest, then the "1." item
def test_any_reply_cut_over_cards_shows_the_same_text(markdown: str, limit: int):
    if re.search(r"(?m)^(?:[ \t]*(?:[-+*>]|[0-9]{1,9}[.)])[ \t]+)*#.*#\s*$", markdown):
        return  # a heading's closing "#"s (in an item or a quote too) are not shown: cut from it,
        # they are (as on every platform)
    chunks = split_reply(markdown, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert _shown_apart(chunks) == _shown_apart([markdown])  # no marker lost to a block's syntax
