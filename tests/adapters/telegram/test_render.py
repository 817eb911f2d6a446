"""Renderers against Telegram's limits and HTML rules, for any valid request and any model text."""

from __future__ import annotations

import re
import secrets
from html.parser import HTMLParser
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from telegram import InlineKeyboardMarkup

from clarigate.adapters.telegram.live import live_html
from clarigate.adapters.telegram.markup import html_to_plain, markdown_to_html, split_markdown
from clarigate.adapters.telegram.render import render_answered, render_clarification, render_wizard
from clarigate.adapters.telegram.wizard import WizardState
from clarigate.agent.protocol import HumanInputRequest, normalize_request
from clarigate.gateway.boundary.outbound_items import ClarificationOut, LiveView

ALLOWED_TAGS = {"b", "i", "s", "code", "pre", "a", "blockquote"}

text = st.text(min_size=1, max_size=250)
field_types = st.sampled_from(
    ["text", "textarea", "number", "select", "multi_select", "checkbox", "date", "odd"]
)
fields = st.lists(
    st.fixed_dictionaries(
        {"name": st.text(min_size=1, max_size=40), "label": text, "type": field_types},
        optional={"required": st.booleans(), "options": st.lists(text, max_size=30), "placeholder": text},
    ),
    max_size=20,
)
tool_args = st.fixed_dictionaries(
    {"question": text},
    optional={
        "clarification_type": st.sampled_from(
            ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"]
        ),
        "context": text,
        "options": st.lists(text, max_size=30),
        "fields": fields,
    },
)


def pieces(tokens: list[str], least: int, most: int) -> st.SearchStrategy[str]:
    """Text made of Markdown-ish tokens (so syntax appears far more often than at random)."""
    return st.lists(st.sampled_from(tokens), min_size=least, max_size=most).map("".join)


class TagChecker(HTMLParser):
    """Fails on tags Telegram does not accept and on unbalanced nesting."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: Any) -> None:
        assert tag in ALLOWED_TAGS, tag
        self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        assert self.stack and self.stack.pop() == tag, tag


def assert_valid_html(html: str) -> None:
    checker = TagChecker()
    checker.feed(html)
    checker.close()
    assert checker.stack == []


def assert_fits(message) -> None:
    assert 0 < len(message.text) <= 4096
    assert_valid_html(message.text)
    markup = message.reply_markup
    if isinstance(markup, InlineKeyboardMarkup):
        buttons = [b for row in markup.inline_keyboard for b in row]
        assert len(buttons) <= 100
        assert all(len(row) <= 8 for row in markup.inline_keyboard)
        assert all(1 <= len(b.callback_data.encode()) <= 64 for b in buttons)
        assert all(b.text for b in buttons)


def full_values(request: HumanInputRequest) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for f in request.fields:
        if f.type == "multi_select":
            values[f.name] = [o.value for o in f.options]
        elif f.type == "checkbox":
            values[f.name] = True
        elif f.options:
            values[f.name] = f.options[-1].value
        else:
            values[f.name] = "x" * 200
    return values


@settings(max_examples=150, deadline=None)
@given(tool_args)
def test_any_request_renders_within_telegram_limits(args: dict[str, Any]) -> None:
    request = normalize_request(args, "call-1")
    token = secrets.token_urlsafe(12)
    assert_fits(
        render_clarification(ClarificationOut(request=request, fallback_text="fallback", token=token))
    )
    answered = render_answered(request, "✅ Answered by someone: " + "y <&> " * 2000)
    assert_fits(answered)
    assert "✅ Answered by someone: y &lt;&amp;&gt;" in answered.text
    state = WizardState(request_id=request.request_id, token=token, user_id="1", chat_id="1", message_id="1")
    state = state.model_copy(update={"values": full_values(request), "notice": "n" * 200})
    for step in range(len(request.fields) + 1):
        assert_fits(render_wizard(request, state.model_copy(update={"step": step})))


@settings(max_examples=200, deadline=None)
@given(pieces(list("ab *_~`[]()<>&@#>-\n") + ["```", "**", "https://x.y"], 0, 200))
def test_any_model_text_becomes_valid_html(markdown: str) -> None:
    assert_valid_html(markdown_to_html(markdown))


@settings(max_examples=25, deadline=None)
@given(pieces(list("ab <&\n") + ["\n\n", "```\n", "**x**", "word " * 40], 200, 1500))
def test_any_long_text_splits_into_messages_that_fit(markdown: str) -> None:
    for piece in split_markdown(markdown):
        html = markdown_to_html(piece)
        assert len(html) <= 4096
        assert_valid_html(html)


def test_markdown_conversion_examples() -> None:
    source = "\n".join(
        [
            "# Plan",
            "- **build** the `app<1>`",
            "> careful & slow",
            "```sh",
            "rm -rf <dir>",
            "```",
            "snake_case and *done*",
        ]
    )
    assert markdown_to_html(source).split("\n") == [
        "<b>Plan</b>",
        "• <b>build</b> the <code>app&lt;1&gt;</code>",
        "<blockquote>careful &amp; slow</blockquote>",
        '<pre><code class="language-sh">rm -rf &lt;dir&gt;</code></pre>',
        "snake_case and <i>done</i>",
    ]
    assert markdown_to_html("[site](https://a.b/?x=1&y=2) [evil](javascript:alert(1))") == (
        '<a href="https://a.b/?x=1&amp;y=2">site</a> evil'
    )


@pytest.mark.timeout(30)  # about 80 s when a search was quadratic in the line; 2-3 s now
def test_long_lines_of_markup_convert_and_split_in_one_pass() -> None:
    # One long paragraph of model text must not stall the event loop every chat shares.
    for line in ("**a** " * 3000, "**a " * 3000, "[a](" * 5000, "~~a " * 3000, "https://" + "." * 20000):
        assert_valid_html(markdown_to_html(line))
        assert all(len(markdown_to_html(piece)) <= 4096 for piece in split_markdown(line))
    assert markdown_to_html("**a *b* c** and ~~x~~ [l](https://a.b/c) ***both***") == (
        '<b>a <i>b</i> c</b> and <s>x</s> <a href="https://a.b/c">l</a> <i><b>both</b></i>'
    )


def test_bare_urls_keep_their_underscores_stars_and_at_signs() -> None:
    # Emphasis inside a URL would change the address Telegram links to. An address whose "@"
    # could start a mention becomes a link: the address intact, the "@" in its text inert.
    source = (
        "See https://docs.python.org/3/reference/datamodel.html#object.__init__, "
        "**https://a.b/x__y__z** and (https://x.com/@dev/*a*?q=1&r=2)."
    )
    assert markdown_to_html(source) == (
        "See https://docs.python.org/3/reference/datamodel.html#object.__init__, "
        '<b>https://a.b/x__y__z</b> and (<a href="https://x.com/@dev/*a*?q=1&amp;r=2">'
        "https://x.com/@\u2060dev/*a*?q=1&amp;r=2</a>)."
    )


# Telegram's mention rule: "@" and 2-32 of [A-Za-z0-9_], no word character on either side.
TELEGRAM_MENTION = re.compile(r"(?<!\w)@[A-Za-z0-9_]{2,32}(?!\w)")


def visible_outside_code(html: str) -> str:
    """The text Telegram shows, code left out (Telegram finds no mention inside code)."""
    return html_to_plain(re.sub(r"<(pre|code)[^>]*>.*?</\1>", " ", html, flags=re.DOTALL))


url_pieces = [
    "https://x.y",
    "https://x.com/",
    "@dev",
    "@all",
    "@admin",
    ")",
    "(",
    "*",
    "_",
    "`",
    "/",
    " ",
    "a",
]


@settings(max_examples=300, deadline=None)
@given(pieces(url_pieces + ["[l](https://a.b)", "`c`", "**", ".", "\n", "<", "&"], 1, 40))
def test_addresses_next_to_links_code_and_mentions_leak_nothing_and_ping_nobody(markdown: str) -> None:
    html = markdown_to_html(markdown)
    assert_valid_html(html)
    assert "\x00" not in html
    assert not TELEGRAM_MENTION.search(visible_outside_code(html)), html


def test_an_address_followed_by_a_link_or_code_keeps_both() -> None:
    # These once came out as the converter's internal placeholders ("\x00" digit "\x00").
    assert markdown_to_html("see https://a.b/c [docs](https://d.e) or https://f.g `x`") == (
        'see https://a.b/c <a href="https://d.e">docs</a> or https://f.g <code>x</code>'
    )
    assert markdown_to_html("https://a.b[l](https://c.d)`e`") == (
        'https://a.b<a href="https://c.d">l</a><code>e</code>'
    )


def test_a_mention_glued_to_an_address_is_inert() -> None:
    # Where Telegram's address ends, "@admin" would begin a mention.
    assert markdown_to_html("https://x.y)@admin") == "https://x.y)@\u2060admin"
    assert markdown_to_html("(https://x.y/a)@all") == "(https://x.y/a)@\u2060all"
    assert markdown_to_html("**https://x.y**@admin") == "<b>https://x.y</b>@\u2060admin"
    assert markdown_to_html("https://@admin") == "https://@\u2060admin"
    # An "@" inside an address after a word character is never a mention and stays as it is.
    assert markdown_to_html("https://me:pw@host.example/p") == "https://me:pw@host.example/p"


def test_addresses_end_where_their_brackets_and_punctuation_say() -> None:
    assert markdown_to_html("(see https://en.wikipedia.org/wiki/Foo_(bar)), then https://a.b/c.") == (
        "(see https://en.wikipedia.org/wiki/Foo_(bar)), then https://a.b/c."
    )
    assert markdown_to_html("_https://a.b_ and *https://a.b/x*") == (
        "<i>https://a.b</i> and <i>https://a.b/x</i>"
    )


def test_commonmark_blocks_become_telegram_html() -> None:
    source = "\n".join(
        [
            "Title",
            "===",
            "",
            "1. one",
            "2. two",
            "   - nested",
            "",
            "> outer",
            "> > inner",
            "",
            "---",
            "",
            "    indented <code>",
            "",
            "![chart](https://img.example/c.png) [bad](tg://resolve?domain=x) [](https://a.b)",
        ]
    )
    assert markdown_to_html(source).split("\n") == [
        "<b>Title</b>",
        "",
        "1. one",
        "2. two",
        "  • nested",
        "",
        "<blockquote>outer",
        "inner</blockquote>",  # Telegram cannot nest quotes
        "",
        "———",
        "",
        "<pre>indented &lt;code&gt;</pre>",
        "",
        '<a href="https://img.example/c.png">chart</a> bad <a href="https://a.b">https://a.b</a>',
    ]


STREAMED = (
    "## Plan\n\nI will **change `app.py`** and [the docs](https://d.example/x?a=1&b=2):\n\n"
    "- first *step* with https://x.example/@dev\n- second ~~old~~ step\n\n"
    "```python\ndef f(x):\n    return x < 2 and x > 0\n```\n\n> done & **dusted** @all\n\n"
) * 20  # past one message: the draft is cut


@settings(max_examples=40, deadline=None)
@given(st.integers(0, len(STREAMED)))
def test_every_prefix_of_a_streamed_reply_is_valid_html_that_fits(end: int) -> None:
    html = live_html(LiveView(mode="draft", text=STREAMED[:end], status="⏳ Working…"))
    assert 0 < len(html) <= 4096
    assert_valid_html(html)
    assert "\x00" not in html
    assert not TELEGRAM_MENTION.search(visible_outside_code(html)), html


paragraph = pieces(
    ["word ", "**", "*", "_", "`", "~~", "[l](https://a.b) ", "https://x.y/@dev ", "@all ", "<&> "]
    + ["# ", "> ", "- ", "1. ", "2) ", "Title\n---"],
    1,
    12,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(paragraph, min_size=1, max_size=30))
@example(  # an unclosed fence: the rest of the reply is one code block, longer than a message
    [
        "~~~~Title\n---word word word word [l](https://a.b) ",
        *["word "] * 3,
        "word word word [l](https://a.b) ",
    ]
    * 3
)
@example(  # the same without a language: the code blocks are a bare <pre>
    [
        "~~~~",
        *["word "] * 2,
        "word word word word ",
        "word word word word word word ",
        "word word word word word word word word word ",
        "word word word word word word word [l](https://a.b) [l](https://a.b) ",
        "word word word word word word word word word word word ",
        "word word word word word word [l](https://a.b) ",
    ]
)
@example(["word [l](https://a.b) [l](https://a.b) " + "https://x.y/@dev " * 5])  # one paragraph, cut
@example(  # a list item cut: its rest goes on without a bullet of an item that is not there
    [
        "- word word [l](https://a.b) https://x.y/@dev ",
        "- word word word https://x.y/@dev https://x.y/@dev https://x.y/@dev https://x.y/@dev ",
    ]
)
@example(["- https://x.y/@dev ", "- # " + "https://x.y/@dev " * 5])  # a heading in an item: bold on
@example(["word " * 8, "word " * 12, "word " * 6 + "https://x.y/@dev " * 2, "word " * 9, "> "])  # ">" alone
@example(  # an item opening with a heading, after a cut between items: no "#" put before its "-"
    [
        "- word word word word word word word https://x.y/@dev https://x.y/@dev ",
        "- word word word word word https://x.y/@dev ",
        "- # word [l](https://a.b) https://x.y/@dev ",
    ]
)
@example(  # a fence alone at the end: a code block of nothing
    [
        "word word word word word word [l](https://a.b) ",
        "word word word word word [l](https://a.b) https://x.y/@dev ",
        "word word word word word word word word [l](https://a.b) [l](https://a.b) ",
        "~~~~word ",
    ]
)
def test_a_split_reply_shows_exactly_what_the_whole_would(paragraphs: list[str]) -> None:
    # Pieces are cut between blocks: each renders alone as it did inside the whole reply (the
    # edges between pieces are the messages' edges). A code block longer than a message is cut
    # and fenced again on both sides: where one code block meets the next is an edge too; a
    # paragraph longer than a message is cut between two words, its space an edge.
    whole = "\n\n".join(paragraphs)
    split = split_markdown(whole, 300)
    assert all(len(markdown_to_html(piece)) <= 300 for piece in split)
    shown = [markdown_to_html(piece) for piece in split]
    if html_to_plain(markdown_to_html(whole)).strip():  # else it shows nothing: sent as written
        assert reads_as(shown, markdown_to_html(whole))


#: Where one message ends and the next begins, in the test's view of them read in a row.
EDGE = "\x00"


def reads_as(messages: list[str], whole: str) -> bool:
    """True when ``messages`` read one after another show ``whole``: the same text and tags, each
    edge between two messages standing for the whitespace of the whole there (a line end, or the
    space where a long paragraph was cut), and a code block cut in two read as one (with a
    language: ``<pre><code class=…>``; without: a bare ``<pre>``), as is a heading or quote cut in
    two, bold or quoted on both sides of the edge (``look_across``)."""
    shown = EDGE.join(messages)
    shown = re.sub(rf'\s*</code></pre>\s*{EDGE}\s*<pre><code(?: class="[^"]*")?>', EDGE, shown)
    shown = re.sub(rf"\s*</pre>\s*{EDGE}\s*<pre>", EDGE, shown)
    parts = shown.split(EDGE)
    joiners = []
    for index in range(1, len(parts)):
        joiner, parts[index - 1], parts[index] = look_across(parts[index - 1], parts[index])
        joiners.append(joiner)
    pattern = re.escape(as_read(parts[0]).strip())
    for joiner, part in zip(joiners, parts[1:], strict=True):
        pattern += joiner + re.escape(as_read(part).strip())
    return re.fullmatch(pattern, as_read(whole).strip()) is not None


def look_across(before: str, after: str) -> tuple[str, str, str]:
    """What the whole has where message ``before`` meets ``after``: white space, or where the one
    ends with ``</b>`` or ``</blockquote>`` and the other opens it again (a heading or quote cut
    there, its look kept on both pieces), those tags or nothing; and the two messages without
    those tags."""
    tags: list[str] = []
    while True:
        closed = re.search(r"</(b|blockquote)>\s*$", before)
        opened = re.match(r"\s*<(b|blockquote)>", after)
        if closed is None or opened is None or closed.group(1) != opened.group(1):
            break
        tags = [closed.group().strip(), *tags, opened.group().strip()]
        before, after = before[: closed.start()], after[opened.end() :]
    if not tags:
        return r"\s*", before, after
    written = r"\s*".join(map(re.escape, tags))
    return rf"\s*(?:{written}\s*)?", before, after


def as_read(html: str) -> str:
    """``html`` with the whitespace around line ends as one line end (what a person sees)."""
    return re.sub(r"\s*\n\s*", "\n", html)


def test_a_code_block_longer_than_a_message_is_cut_and_fenced_again() -> None:
    whole = "~~~~Title\n" + "\n".join(f"line {n} of the code" for n in range(40))
    split = split_markdown(whole, 300)
    assert len(split) > 1
    for piece in split:
        html = markdown_to_html(piece)
        assert html.startswith('<pre><code class="language-Title">') and html.endswith("</code></pre>")
        assert len(html) <= 300
    assert reads_as([markdown_to_html(p) for p in split], markdown_to_html(whole))
