"""Rendering is pure: any request fits Slack's limits, model text can never ping or smuggle markup."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slack_sdk.models.blocks import Block
from slack_sdk.models.views import View

from clarigate.adapters.slack.markup import markdown_to_mrkdwn, split_mrkdwn
from clarigate.adapters.slack.modals import form_values, modal_metadata, render_form_modal, render_other_modal
from clarigate.adapters.slack.render import render_answered, render_clarification, render_reply
from clarigate.agent.protocol import FormField, HumanInputRequest, Option, normalize_request
from clarigate.agent.protocol.bounds import BOUND_KEYS
from clarigate.gateway.boundary.outbound_items import ClarificationOut

from .fake_stream import block_problems
from .fake_views import view_problems

TOKEN = "AbCdEfGhIjKlMnOp"  # the core's tokens are 16 url-safe characters
BROADCAST = re.compile(r"@(channel|here|everyone)", re.IGNORECASE)
#: A link's target (``<target|label>``): Slack reads no mention in it (it pings for ``<!here>``
#: alone; clarigate never sets ``link_names``), and a zero-width space in it would break it.
LINK_TARGET = re.compile(r"(?<=<)(?:https?://|mailto:)[^<>|]*(?=\|)")
#: An email address's "@": a name before it, a domain after ("ops@here.com").
EMAIL_AT = re.compile(r"[A-Za-z0-9]@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")


def broadcasts_read(mrkdwn: str) -> list[str]:
    """The broadcast words a person reads as words in ``mrkdwn`` (labels included): all but those
    of its links' targets and of email addresses."""
    text = LINK_TARGET.sub("", mrkdwn)
    return [
        m.group() for m in BROADCAST.finditer(text) if not (m.start() and EMAIL_AT.match(text, m.start() - 1))
    ]


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
    made = []
    for i in range(count):
        kind = draw(kinds)
        made.append(
            FormField(
                name=f"f{i}",
                label=draw(texts),
                type=kind,
                required=draw(st.booleans()),
                placeholder=draw(st.none() | texts),
                options=draw(options(prefix=f"f{i}-option", max_size=12)),
                # a typed interrupt's text or number: its value shown, its schema's bounds
                default=draw(st.none() | DEFAULTS[kind]) if kind in DEFAULTS else None,
                bounds=draw(st.none() | bounds) if kind in DEFAULTS else None,
            )
        )
    return made


#: Any number a schema may set as a bound (crossing, huge, fractional lengths, infinite, NaN)
bound_numbers = (
    st.integers(-(10**30), 10**30) | st.integers(-5, 4000) | st.floats(allow_nan=True, allow_infinity=True)
)
bounds = st.dictionaries(st.sampled_from(BOUND_KEYS), bound_numbers, max_size=6).map(
    lambda found: found | {"multipleOf": 1} if len(found) % 2 else found  # an integer's: a whole input
)
DEFAULTS = {
    "text": st.text(max_size=40) | st.just("x" * 3001),
    "textarea": st.text(max_size=40),
    # a whole field's integral float too (a schema's 3.0, "3.0" asked again): shown as "3"
    "number": st.integers(-20, 20) | st.integers(-20, 20).map(float) | st.floats(-1e6, 1e6),
}


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
    assert block_problems(blocks) == []  # what the fake Slack checks too, as Slack does
    if request.fields or 0 < len(request.options) <= 100:  # native, not the text fallback
        assert set(_action_ids(blocks)) - {"clarigate:decline"}, blocks[-1]
    assert_slack_accepts(render_answered(request, "✅ Answered by <@U1>: x"), 50)
    for modal in (
        render_form_modal(request, modal_metadata(TOKEN, "C1", "1.2")),
        render_other_modal(request, "{}"),
    ):
        assert View(**modal).to_dict() == modal  # title, 100 blocks, private_metadata limits
        assert_slack_accepts(modal["blocks"], 100)
        assert view_problems(modal) == []  # views.open takes it (the fake checks what Slack does)


#: A model's raw tool arguments: any field type, options, and a default of any kind
raw_texts = texts | st.sampled_from(["2026-12-01", "1e20", "true", "是", "x" * 3001, "\n", "5"])
raw_fields = st.fixed_dictionaries(
    {
        "name": raw_texts,
        "type": st.sampled_from(
            ["text", "textarea", "number", "select", "multi_select", "checkbox", "date", "radio", "bogus"]
        ),
    },
    optional={
        "label": raw_texts,
        "required": st.booleans(),
        "placeholder": raw_texts,
        "options": st.lists(
            raw_texts | st.fixed_dictionaries({"label": raw_texts, "value": raw_texts}), max_size=30
        ),
        "default": st.none()
        | raw_texts
        | st.integers()
        | st.floats()
        | st.booleans()
        | st.lists(raw_texts, max_size=5),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.fixed_dictionaries({"question": raw_texts, "fields": st.lists(raw_fields, max_size=20)}))
def test_any_form_a_model_asks_for_opens_as_a_modal_slack_takes(args: dict):
    request = normalize_request(args, "call-1")
    assert view_problems(render_form_modal(request, modal_metadata(TOKEN, "C1", "1.2"))) == []
    assert view_problems(render_other_modal(request, modal_metadata(TOKEN, "C1", "1.2"))) == []


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
        assert not broadcasts_read(chunk), chunk


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


@pytest.mark.parametrize(
    ("markdown", "shown"),
    [
        (r"\*c\* and \_d\_ and \~e\~", "*c* and _d_ and ~e~"),
        ("``b ` c``", "`b ` c`"),
        ("2 * 3 * 4 and snake_case", "2 * 3 * 4 and snake_case"),
    ],
)
def test_characters_the_model_wrote_as_text_stay_text(markdown: str, shown: str):
    converted = markdown_to_mrkdwn(markdown)
    assert converted.replace("\u200b", "") == shown  # as written, a zero-width space aside
    inner = converted[1:-1] if markdown.startswith("`") else converted
    for marker in re.finditer(r"[*_~`]", inner):  # each marker, but inside a word, defused
        at = marker.start()
        word = inner[at - 1 : at].isalnum() and inner[at + 1 : at + 2].isalnum()
        assert word or inner[at - 1 : at] == inner[at + 1 : at + 2] == "\u200b", converted
    assert markdown_to_mrkdwn("*i* **b** ~~s~~ `c`") == "_i_ *b* ~s~ `c`"  # the model's styles kept


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "b", " ", "\\*", "\\_", "\\~", " **x** "]), min_size=1).map(
        lambda parts: "x " + "".join(parts)
    )
)
def test_escaped_markers_show_as_written_and_never_open_or_close_a_style(markdown: str):
    converted = markdown_to_mrkdwn(markdown)
    assert converted.replace("\u200b", "") == markdown.strip().replace("\\", "").replace("**x**", "*x*")
    styled = converted.replace("*x*", "")  # the model's own bold, the one style it asked for
    for marker in re.finditer(r"[*_~]", styled):
        at = marker.start()
        word = styled[at - 1 : at].isalnum() and styled[at + 1 : at + 2].isalnum()
        assert word or styled[at - 1 : at] == styled[at + 1 : at + 2] == "\u200b", converted


def test_mentions_and_broadcasts_from_the_model_are_neutralized():
    converted = markdown_to_mrkdwn("<!channel> <!here> <@U123> @everyone @here")
    assert "<!" not in converted and "<@" not in converted
    assert converted.startswith("&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt; @\u200beveryone @\u200bhere")
    cjk = markdown_to_mrkdwn("@here大家看一下，@Channel_team")
    assert cjk == "@\u200bhere大家看一下，@\u200bChannel_team"


def test_addresses_keep_their_broadcast_words_where_slack_reads_no_mention():
    # a link's target whole (a zero-width space in it would break the link), its label still broken
    assert (
        markdown_to_mrkdwn("see [docs](https://example.com/@here/x)")
        == "see <https://example.com/@here/x|docs>"
    )
    assert markdown_to_mrkdwn("[@everyone](https://example.com/@everyone)") == (
        "<https://example.com/@everyone|@\u200beveryone>"
    )
    # a bare address becomes a link to it whole; the address it shows stays broken
    assert markdown_to_mrkdwn("open https://example.com/@channel now") == (
        "open <https://example.com/@channel|https://example.com/@\u200bchannel> now"
    )
    assert markdown_to_mrkdwn("[write](mailto:ops@channel.io)") == "<mailto:ops@channel.io|write>"
    assert markdown_to_mrkdwn("mailto:ops@channel.io or x@here.com, not @here") == (
        "mailto:ops@channel.io or x@here.com, not @\u200bhere"
    )
    # no name before, or no domain after: not an address
    assert markdown_to_mrkdwn("x@here and @here.com") == "x@\u200bhere and @\u200bhere.com"
    # a link too long for a message goes as text: its address is broken then
    long = markdown_to_mrkdwn("[docs](https://example.com/@here/" + "a" * 5000 + ")")
    chunks = split_mrkdwn(long, 3900)
    assert chunks[0].startswith("docs (https://example.com/@\u200bhere/aaa")
    assert not [chunk for chunk in chunks if broadcasts_read(chunk)]


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
