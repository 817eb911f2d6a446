"""Rendering is pure: any request fits Slack's limits, model text can never ping or smuggle markup."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from clarigate.adapters.slack.live import PIECE_CHARS, piece_end
from clarigate.adapters.slack.markup import cut, cut_escaped, markdown_to_mrkdwn, split_mrkdwn
from clarigate.adapters.slack.modals import form_values, modal_metadata, render_form_modal, render_other_modal
from clarigate.adapters.slack.render import render_answered, render_clarification, render_reply
from clarigate.adapters.slack.stream_text import link_start
from clarigate.agent.protocol import FormField, HumanInputRequest, Option
from clarigate.gateway.boundary.messages import ClarificationOut

from ..code_samples import CODE_PIECES, STRAY_FENCE
from ..emoji_text import AT_THE_CUT, emoji_texts, whole

TOKEN = "AbCdEfGhIjKlMnOp"  # the core's tokens are 16 url-safe characters

texts = st.text(min_size=0, max_size=80) | st.sampled_from(
    ["<!channel> deploy", "@here look", "<@U123> hi", "a & b < c > d", "x" * 5000, "**bold** `code`", " "]
)
#: A code block of one line with no space in it (minified JSON, base64): its pieces fill a section
#: to the character.
long_code = st.integers(2990, 20000).map(lambda n: "```\n" + "x" * n + "\n```")


@st.composite
def options(draw: st.DrawFn, prefix: str = "option", max_size: int = 30) -> list[Option]:
    labels = draw(st.lists(texts, max_size=max_size))
    return [
        Option(id=f"{prefix}-{i}", label=label, value=label or f"v{i}") for i, label in enumerate(labels, 1)
    ]


@st.composite
def fields(draw: st.DrawFn) -> list[FormField]:
    count = draw(st.integers(0, 18))
    kinds = st.sampled_from(["text", "textarea", "number", "select", "multi_select", "checkbox", "date"])
    return [
        FormField(
            name=f"f{i}",
            label=draw(texts),
            type=draw(kinds),
            required=draw(st.booleans()),
            placeholder=draw(st.none() | texts),
            options=draw(options(prefix=f"f{i}-option", max_size=12)),
        )
        for i in range(count)
    ]


@st.composite
def requests(draw: st.DrawFn) -> HumanInputRequest:
    form_fields = draw(fields())
    top_options = draw(options(max_size=120))
    mode = "form" if form_fields else ("choice_with_other" if top_options else "free_text")
    return HumanInputRequest(
        request_id="clarification:call-1",
        tool_call_id="call-1",
        clarification_type=draw(
            st.sampled_from(
                [
                    "missing_info",
                    "ambiguous_requirement",
                    "approach_choice",
                    "risk_confirmation",
                    "suggestion",
                ]
            )
        ),
        question=draw(texts | long_code),
        context=draw(st.none() | texts | long_code),
        input_mode=mode,
        options=top_options,
        fields=form_fields,
        locale=draw(st.sampled_from(["en", "zh"])),
    )


def assert_slack_accepts(blocks: list[dict], max_blocks: int) -> None:
    """Block Kit's own validation, plus the limits ``to_dict()`` does not check."""
    assert 1 <= len(blocks) <= max_blocks
    for block in blocks:
        assert Block.parse(block).to_dict() == block
        if block["type"] == "section":
            assert len(block["text"]["text"]) <= 3000  # Slack answers invalid_blocks past it
        elements = [*block.get("elements", []), *([block["element"]] if "element" in block else [])]
        for element in elements:
            if element.get("type") in ("checkboxes", "radio_buttons"):
                assert len(element["options"]) <= 10
            for option in element.get("options", []):
                assert len(option["value"]) <= 75


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(requests())
def test_any_request_renders_to_blocks_and_modals_slack_accepts(request: HumanInputRequest):
    blocks = render_clarification(
        ClarificationOut(request=request, fallback_text=request.question, token=TOKEN)
    )
    assert_slack_accepts(blocks, 50)
    if request.fields or 0 < len(request.options) <= 100:  # native, not the text fallback
        assert set(_action_ids(blocks)) - {"clarigate:decline"}, blocks[-1]
    assert_slack_accepts(render_answered(request, "✅ Answered by <@U1>: x"), 50)
    for modal in (
        render_form_modal(request, modal_metadata(TOKEN, "C1", "1.2")),
        render_other_modal(request, "{}"),
    ):
        assert View(**modal).to_dict() == modal  # title, 100 blocks, private_metadata limits
        assert_slack_accepts(modal["blocks"], 100)


def _action_ids(blocks: list[dict]) -> list[str]:
    return [element.get("action_id", "") for block in blocks for element in block.get("elements", [])]


@pytest.mark.parametrize("length", [2991, 2992, 2993, 20000])
def test_a_question_whose_code_fills_its_sections_keeps_every_section_within_slacks_limit(length: int):
    # one code line of no space: each piece between its fences fills a section to the character
    request = HumanInputRequest(
        request_id="r",
        tool_call_id="t",
        question="Apply this config?\n\n```json\n" + "x" * length + "\n```",
        context="```\n" + "y" * length + "\n```",
        input_mode="choice_with_other",
        options=[Option(id="a", label="Apply", value="a"), Option(id="b", label="Keep", value="b")],
    )
    out = ClarificationOut(request=request, fallback_text=request.question, token=TOKEN)
    blocks = render_clarification(out)
    assert "clarigate:o1" in _action_ids(blocks)  # its buttons, not the text fallback
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert all(len(text) <= 3000 for text in sections), [len(text) for text in sections]
    shown = "".join(re.findall(r"```\n(x+)\n```", "\n".join(sections)))
    assert shown == "x" * length or (len(shown) > 11000 and sections[-1].endswith("…"))  # or cut, visibly
    for rendered in (
        render_answered(request, "✅ Answered by <@U1>: Keep"),
        render_form_modal(request, "{}")["blocks"],
        render_other_modal(request, "{}")["blocks"],
    ):
        assert all(len(b["text"]["text"]) <= 3000 for b in rendered if b["type"] == "section")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=2000))
def test_model_text_never_pings_or_smuggles_control_sequences(markdown: str):
    for chunk in render_reply(markdown):
        assert len(chunk) <= 4000
        for control in re.findall(r"<[^>]*>?", chunk):
            assert re.match(r"<(https?://|mailto:)[^<>|]*\|[^<>]*>", control), control
        assert not re.search(r"@(channel|here|everyone)", chunk, re.IGNORECASE)


def test_markdown_becomes_mrkdwn():
    converted = markdown_to_mrkdwn(
        "# Plan\n**Bold** and *italic*, ~~old~~ and `a<b>`\n- one\n* two\n"
        "See [the docs](https://example.com/?a=1&b=2) or [this](javascript:alert(1))\n"
        "```\nif a < b && c:\n```"
    )
    assert converted.split("\n") == [
        "*Plan*",
        "*Bold* and _italic_, ~old~ and `a&lt;b&gt;`",
        "• one",
        "• two",
        "See <https://example.com/?a=1&amp;b=2|the docs> or this",
        "```",
        "if a &lt; b &amp;&amp; c:",
        "```",
    ]


def test_mentions_and_broadcasts_from_the_model_are_neutralized():
    converted = markdown_to_mrkdwn("<!channel> <!here> <@U123> @everyone @here")
    assert "<!" not in converted and "<@" not in converted
    assert converted.startswith("&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt; @\u200beveryone @\u200bhere")
    cjk = markdown_to_mrkdwn("@here大家看一下，@Channel_team")
    assert cjk == "@\u200bhere大家看一下，@\u200bChannel_team"


def test_long_replies_split_and_code_blocks_stay_closed():
    text = "intro\n```\n" + "\n".join(f"line {i} " + "x" * 80 for i in range(120)) + "\n```\nthe end"
    chunks = render_reply(text)
    assert len(chunks) > 1 and all(len(c) <= 3900 for c in chunks)
    assert all(c.count("```") % 2 == 0 for c in chunks)
    joined = "\n".join(chunks)
    assert all(f"line {i} " in joined for i in range(120)) and chunks[-1].endswith("the end")
    assert split_mrkdwn("a" * 9000, 3900) == ["a" * 3892, "a" * 3892, "a" * 1216]


def test_options_beyond_five_become_a_select_and_beyond_a_hundred_the_text_fallback():
    def request(count: int) -> HumanInputRequest:
        opts = [
            Option(id=f"option-{i}", label=f"Choice {i} " + "y" * 90, value=f"c{i}")
            for i in range(1, count + 1)
        ]
        return HumanInputRequest(
            request_id="r", tool_call_id="t", question="Pick", input_mode="choice_with_other", options=opts
        )

    few = render_clarification(ClarificationOut(request=request(5), fallback_text="fb", token=TOKEN))
    assert [e["type"] for e in few[-1]["elements"]] == ["button"] * 7  # options, Other…, Cancel
    assert all(len(e["text"]["text"]) <= 75 for e in few[-1]["elements"])
    many = render_clarification(ClarificationOut(request=request(30), fallback_text="fb", token=TOKEN))
    select = many[-1]["elements"][0]
    assert select["type"] == "static_select" and len(select["options"]) == 30
    assert select["options"][29]["value"] == f"{TOKEN}|o30"
    too_many = render_clarification(
        ClarificationOut(request=request(101), fallback_text="1. a\n2. b", token=TOKEN)
    )
    assert [b["type"] for b in too_many] == ["section", "actions"]
    assert (
        too_many[0]["text"]["text"]
        == "(Too big for buttons or a form here, so this is asked as text.)\n\n1. a\n2. b"
    )
    assert [e["action_id"] for e in too_many[1]["elements"]] == ["clarigate:decline"]  # still a way out


def test_form_values_are_read_back_by_field():
    request = HumanInputRequest(
        request_id="r",
        tool_call_id="t",
        question="Q",
        input_mode="form",
        fields=[
            FormField(
                name="langs",
                label="Languages",
                type="multi_select",
                options=[Option(id=f"langs-option-{i}", label=f"L{i}", value=f"l{i}") for i in range(1, 13)],
            ),
            FormField(name="notes", label="Notes", type="textarea"),
            FormField(name="ok", label="OK?", type="checkbox"),
        ],
    )
    modal = render_form_modal(request, "{}")
    assert (
        modal["blocks"][-3]["element"]["type"] == "multi_static_select"
    )  # 12 options: more than 10 checkboxes
    state = {
        "field-1": {
            "value": {"type": "multi_static_select", "selected_options": [{"value": "2"}, {"value": "12"}]}
        },
        "field-2": {"value": {"type": "plain_text_input", "value": None}},
        "field-3": {"value": {"type": "checkboxes", "selected_options": []}},
    }
    # an input left empty is given blank: no value, even where the field showed one
    assert form_values(request, state) == {"langs": ["l2", "l12"], "notes": "", "ok": False}


def test_question_is_bold_when_plain_and_converted_when_it_carries_markdown():
    def question(text: str) -> str:
        request = HumanInputRequest(
            request_id="r", tool_call_id="t", question=text, context="Use `uv` or <pip>"
        )
        blocks = render_clarification(ClarificationOut(request=request, fallback_text=text, token=TOKEN))
        assert blocks[0]["text"]["text"] == "Use `uv` or &lt;pip&gt;"
        return blocks[1]["text"]["text"]

    assert question("Which package manager & why?") == "❓ *Which package manager &amp; why?*"
    assert question("Pick one:\n- **uv**\n- pip") == "❓ Pick one:\n• *uv*\n• pip"


def test_interface_words_follow_the_request_locale():
    request = HumanInputRequest(
        request_id="r",
        tool_call_id="t",
        question="用哪个框架？",
        input_mode="choice_with_other",
        options=[Option(id="option-1", label="React", value="React")],
        locale="zh",
    )
    blocks = render_clarification(ClarificationOut(request=request, fallback_text="fb", token=TOKEN))
    assert [e["text"]["text"] for e in blocks[-1]["elements"]][-2:] == ["其他…", "取消"]
    modal = render_other_modal(request, "{}")
    assert (modal["title"]["text"], modal["submit"]["text"], modal["close"]["text"]) == (
        "您的回答",
        "提交",
        "取消",
    )


def test_modals_show_the_question_even_after_a_long_context_and_cuts_are_marked():
    request = HumanInputRequest(
        request_id="r",
        tool_call_id="t",
        question="Which region should the cluster run in?",
        context="Background. " * 400,  # about 4,800 characters: more than one section
        input_mode="form",
        fields=[FormField(name="region", label="Region")],
    )
    for modal in (render_form_modal(request, "{}"), render_other_modal(request, "{}")):
        shown = " ".join(b["text"]["text"] for b in modal["blocks"] if b["type"] == "section")
        assert "Which region should the cluster run in?" in shown
        assert "…" in shown  # the context was cut, visibly
    long_question = request.model_copy(update={"question": "word " * 4000, "context": None})
    blocks = render_clarification(ClarificationOut(request=long_question, fallback_text="fb", token=TOKEN))
    sections = [b["text"]["text"] for b in blocks if b["type"] == "section"]
    assert len(sections) == 5 and sections[-1].endswith("…")  # 20,000 characters: cut after five


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
        assert not re.search(r"@(channel|here|everyone)", chunk, re.IGNORECASE)


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


def _controls_closed(mrkdwn: str) -> bool:
    """Every ``<`` of the markup is closed by its ``>`` (no half link)."""
    return re.fullmatch(r"(?:[^<>]|<[^<>]*>)*", mrkdwn) is not None


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
def test_any_reply_with_code_splits_into_messages_each_with_its_code_blocks_closed(markdown: str, limit: int):
    whole = markdown_to_mrkdwn(markdown)
    chunks = split_mrkdwn(whole, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert _shown_apart(chunks) == _code_and_text(whole)  # nothing moved between code and text
    assert _code_and_text(whole)[0] == _written_code(markdown)  # the code shows as code, all of it
    assert all(chunk.strip() for chunk in chunks)  # no message of nothing
    assert sum(map(_empty_code_blocks, chunks)) <= _empty_code_blocks(whole), chunks  # none added


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
