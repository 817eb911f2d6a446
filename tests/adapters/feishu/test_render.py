"""Cards: every valid request renders within the size limit and Feishu's component rules."""

from __future__ import annotations

import html
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from markdown_it.token import Token

from clarigate.adapters.feishu.actions import form_values, read_card_action
from clarigate.adapters.feishu.markup import escape_markdown, split_reply
from clarigate.adapters.feishu.render import CARD_LIMIT_BYTES, card_size, render_clarification, render_reply
from clarigate.adapters.testing import ScriptedRunner
from clarigate.agent.harness import TurnOutput
from clarigate.agent.protocol import (
    FormField,
    HumanInputRequest,
    Option,
    normalize_request,
    render_text_fallback,
)

from ..code_samples import CODE_IN_BLOCKS, CODE_PIECES
from .card_schema import check_card
from .cards import components, is_text_fallback, tags_read, text_of, walk
from .events import message_event

KNOWN_TAGS = {
    "markdown", "plain_text", "button", "column_set", "column", "form", "input", "select_static",
    "multi_select_static", "checker", "date_picker", "hr",
}  # fmt: skip
INPUT_TAGS = {"input", "select_static", "multi_select_static", "checker", "date_picker"}
TOKEN = "AbCdEfGhIjKlMnOp"

nasty = st.sampled_from(
    [
        '<at user_id="all">everyone</at>',
        "<at id=all></at>",
        "@all",
        '<font color="red">x</font>',
        "**",
        "\n",
        "“引号”",
    ]
)
words = st.one_of(st.text(max_size=200), nasty, st.text(alphabet="中文字符测试", max_size=200))
field_types = st.sampled_from(
    ["text", "textarea", "number", "select", "multi_select", "checkbox", "date", "weird"]
)
fields = st.lists(
    st.fixed_dictionaries(
        {"name": words, "label": words, "type": field_types, "required": st.booleans()},
        optional={"options": st.lists(words, max_size=30), "placeholder": words},
    ),
    max_size=20,
)
tool_args = st.fixed_dictionaries(
    {
        "question": words,
        "clarification_type": st.sampled_from(
            [
                "missing_info",
                "ambiguous_requirement",
                "approach_choice",
                "risk_confirmation",
                "suggestion",
                "x",
            ]
        ),
    },
    optional={"context": words, "options": st.lists(words, max_size=30), "fields": fields},
)


def check_component_rules(card: dict[str, Any], request: HumanInputRequest) -> None:
    """The rules Feishu enforces (or we promise): tags, payloads, names, neutralized text."""
    assert card["schema"] == "2.0" and card_size(card) <= CARD_LIMIT_BYTES
    for c in walk(card["body"]):
        assert c["tag"] in KNOWN_TAGS, c["tag"]
        if c["tag"] == "markdown":
            assert tags_read(c["content"]) == []  # no tag from model text survives: no @all, no styling
        if "behaviors" in c:
            value = c["behaviors"][0]["value"]
            assert value["t"] == TOKEN and re.fullmatch(r"o\d+|sel|other|otx|form|yes|x|chk", value["a"])
            assert value["l"] == request.locale
            assert len(json.dumps(value)) < 64
        if c["tag"] == "button":
            assert 0 < len(c["text"]["content"]) <= 60
    assert len(list(walk(card["body"]))) <= 200  # elements and components, every plain_text counted
    cancels = [b for b in components(card, "button") if b["behaviors"][0]["value"]["a"] == "x"]
    assert len(cancels) == 1  # every question can be dismissed
    names = [c["name"] for c in walk(card["body"]) if "name" in c]
    assert len(names) == len(set(names))  # Feishu wants every component name unique in the card
    for form in components(card, "form"):
        named = [c for c in walk(form["elements"]) if c["tag"] in INPUT_TAGS]
        names = [c["name"] for c in named]
        assert len(names) == len(set(names)) and all(re.fullmatch(r"f\d+|other_text", n) for n in names)
        submits = [b for b in components(form, "button") if b.get("form_action_type") == "submit"]
        assert len(submits) == 1
    for menu in components(card, "select_static") + components(card, "multi_select_static"):
        values = [o["value"] for o in menu["options"]]
        assert len(values) == len(set(values)) and all(re.fullmatch(r"o\d+", v) for v in values)
        assert all(len(o["text"]["content"]) <= 100 for o in menu["options"])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tool_args)
def test_any_request_renders_to_a_card_within_the_limits(args):
    request = normalize_request(args, "call-1")
    fallback = render_text_fallback(request)
    card = render_clarification(request, TOKEN, fallback)
    check_component_rules(card, request)
    if not is_text_fallback(card):
        if request.input_mode == "form":
            assert len(components(card, "form")) == 1
        elif request.options:
            pickable = components(card, "button") + components(card, "select_static")
            assert pickable
    else:  # too big for a card: the text rendering, answered by a typed reply
        assert text_of(card).startswith(escape_markdown(fallback[:100]))
    other = render_clarification(request, TOKEN, fallback, other_open=True)
    check_component_rules(other, request)


def test_many_options_become_a_select_menu_and_map_back_to_option_ids():
    request = normalize_request({"question": "Region?", "options": [f"r{i}" for i in range(9)]}, "c")
    card = render_clarification(request, TOKEN, "fallback")
    (menu,) = components(card, "select_static")
    buttons = [b["text"]["content"] for b in components(card, "button")]
    assert len(menu["options"]) == 9 and buttons == ["Other…", "Cancel"]
    picked = read_card_action(request, {"value": {"t": TOKEN, "a": "sel"}, "option": "o7"})
    assert picked.option_id == request.options[6].id


def test_checker_and_date_shapes_feishu_documents_and_older_variants():
    request = normalize_request(
        {"question": "Q", "fields": [{"name": "ok", "type": "checkbox"}, {"name": "day", "type": "date"}]},
        "c",
    )
    # the documented form_value: a checker as a boolean, a date_picker as "yyyy-MM-dd +HHmm"
    assert form_values(request, {"f1": True, "f2": "2024-04-01 +0800"}) == {"ok": True, "day": "2024-04-01"}
    assert form_values(request, {"f1": False, "f2": "2024-04-01 -0500"}) == {"ok": False, "day": "2024-04-01"}
    assert form_values(request, {"f1": ["checked"], "f2": "2026-12-01"}) == {"ok": True, "day": "2026-12-01"}
    assert form_values(request, {"f2": "2026-12-01"}) == {"ok": False, "day": "2026-12-01"}
    assert form_values(request, {"f1": "true", "f9": "ignored"}) == {"ok": True}


def test_replies_cannot_mention_everyone_and_long_ones_are_split():
    cards = render_reply('Hi <at user_id="all">all</at> and <at id=ou_x></at>\n\n' + "word " * 3000)
    assert len(cards) > 1 and all(card_size(c) <= CARD_LIMIT_BYTES for c in cards)
    first = cards[0]["body"]["elements"][0]["content"]
    assert "<at" not in first and "&#60;at user_id" in first
    assert "".join(c["body"]["elements"][0]["content"] for c in cards).count("word") == 3000


def test_split_prefers_paragraph_breaks():
    text = "a" * 3000 + "\n\n" + "b" * 3000
    assert split_reply(text, 4000) == ["a" * 3000, "b" * 3000]
    assert split_reply("   ") == []


def test_a_code_block_cut_between_cards_is_code_on_each_card_with_its_lines_as_written():
    code = "".join(f"def step_{i}(*args, **kwargs):\n    return {i}\n\n\n" for i in range(200))
    cards = [text_of(card) for card in render_reply(f"The script:\n\n```python\n{code}```\n\nRun it.")]
    assert len(cards) >= 2 and cards[0].startswith("The script:\n\n```python\n")
    assert cards[-1].endswith("\n```\n\nRun it.")
    pieces = []
    for shown in cards:  # each card opens the code block with its language and closes it
        assert shown.count("```python\n") == 1 and shown.count("```") == 2, shown[:80]
        pieces.append(shown.split("```python\n")[1].split("\n```")[0])
    assert "\n\n\n" in pieces[0]  # blank lines in code are kept
    shown_lines = [line for piece in pieces for line in piece.split("\n") if line]
    assert shown_lines == [line for line in code.split("\n") if line]  # every line whole, indented


def test_a_request_too_big_for_a_card_falls_back_to_its_text():
    options = [Option(id=f"f-option-{i}", label=f"{i} " + "x" * 198, value=str(i)) for i in range(24)]
    fields = [FormField(name=f"f{n}", label="L" * 200, type="select", options=options) for n in range(16)]
    request = HumanInputRequest(
        request_id="clarification:c", tool_call_id="c", question="Q?", input_mode="form", fields=fields
    )
    card = render_clarification(request, TOKEN, "Q?\n\n  1. L (options: …)")
    assert is_text_fallback(card) and "Q?" in card["body"]["elements"][0]["content"]
    assert card_size(card) <= CARD_LIMIT_BYTES


DROP = "Yes, drop the table users_archive_2019 and every index on it, then "


def test_buttons_differing_only_past_60_characters_are_numbered_and_tell_apart():
    tails = ["vacuum", "reindex the rest", "keep a backup", "tell the team"]
    request = HumanInputRequest(
        request_id="clarification:r1", tool_call_id="r1", clarification_type="risk_confirmation",
        question="Drop it?", input_mode="choice_with_other",
        options=[Option(id=f"option-{i}", label=DROP + t, value=t) for i, t in enumerate(tails, 1)],
    )  # fmt: skip
    card = render_clarification(request, TOKEN, "fallback")
    check_card(card)
    shown = {b["text"]["content"]: b for b in components(card, "button")}
    red = [text for text, b in shown.items() if b["type"] == "danger"]
    assert len(red) == 4 and all(len(text) <= 60 for text in red)
    assert [text[:3] for text in red] == ["1. ", "2. ", "3. ", "4. "]
    assert red[2].endswith("keep a backup")
    picked = read_card_action(request, {"value": shown[red[2]]["behaviors"][0]["value"]})
    assert picked.option_id == "option-3"
    assert f"3. {DROP}keep a backup" in text_of(card)  # every label in full above the buttons


def test_dropdown_entries_differing_only_past_100_characters_keep_their_difference():
    base = "Move the nightly export of the billing warehouse to the new cluster in Frankfurt and then "
    tails = [f"notify team {n} by email" for n in range(8)]
    request = normalize_request({"question": "Which plan?", "options": [base + t for t in tails]}, "c")
    card = render_clarification(request, TOKEN, "fallback")
    check_card(card)
    (menu,) = components(card, "select_static")
    texts = [o["text"]["content"] for o in menu["options"]]
    assert len(set(texts)) == 8 and all(len(t) <= 100 and t.endswith(tails[i]) for i, t in enumerate(texts))
    assert texts[5].startswith("6. Move the nightly")


# --- long replies split into cards: a cut numbered item, and code holding a stray "```"


def test_the_rest_of_a_cut_numbered_item_starts_with_no_number():
    chunks = split_reply(f"1. first\n2. second\n3. {'word ' * 100}\n4. fourth", 120)
    numbers = [re.findall(r"^([0-9]+)\. ", chunk, re.MULTILINE) for chunk in chunks]
    assert len(chunks) > 2 and [number for found in numbers for number in found] == ["1", "2", "3", "4"]


def _fences_closed(markdown: str) -> bool:
    """True when every fenced code block of a card ends with its closing fence (not with the card)."""
    lines = markdown.split("\n")
    for token in _parse(markdown):
        first, stop = token.map or (0, 0)
        last = lines[stop - 1].lstrip(" >").rstrip()
        fence = f"{re.escape(token.markup[:1])}{{{len(token.markup)},}}"
        if token.type == "fence" and (stop - first < 2 or not re.fullmatch(fence, last)):
            return False
    return True


def _parse(markdown: str) -> list[Token]:
    return MarkdownIt("commonmark").disable(["reference", "html_block", "html_inline"]).parse(markdown)


def _code_and_text(markdown: str) -> tuple[str, str]:
    """What a card shows as code and as text (read as CommonMark, entities as the characters they
    show), white space aside: an item's number is not text, but "4. next" after a paragraph's last
    line is (cut before that line, a card must show it as text too: "&#52;. next")."""
    code, text = [], []
    for token in _parse(markdown):
        if token.type in ("fence", "code_block"):
            code.append(token.content)
        elif token.type == "inline":
            text.append(html.unescape(token.content))
    return re.sub(r"\s", "", "".join(code)), re.sub(r"\s", "", "".join(text))


def _empty_code_blocks(markdown: str) -> int:
    """How many code blocks a card shows with nothing in them."""
    return sum(1 for t in _parse(markdown) if t.type in ("fence", "code_block") and not t.content.strip())


def _shown_apart(chunks: list[str]) -> tuple[str, str]:
    shown = [_code_and_text(chunk) for chunk in chunks]
    return "".join(code for code, _ in shown), "".join(text for _, text in shown)


@pytest.mark.parametrize(
    "code",
    CODE_IN_BLOCKS,
)
def test_code_cut_between_cards_stays_code_and_the_text_after_it_text(code: str):
    whole = f"Before it.\n\n{code}\n\nThe end, *not* code."
    for limit in range(60, 230):
        chunks = split_reply(whole, limit)
        assert len(chunks) > 1 and all(len(chunk) <= limit and _fences_closed(chunk) for chunk in chunks)
        assert _shown_apart(chunks) == _code_and_text(whole), (limit, chunks)
        assert chunks[-1].endswith("The end, *not* code.")


code_blocks = st.lists(
    st.sampled_from(CODE_PIECES),
    min_size=1,
    max_size=300,
).map("".join)


@settings(max_examples=150, deadline=None)
@given(code_blocks, st.sampled_from([60, 150, 300]))
@example("```\n> ", 60)  # a code line of a ">" alone is code, not a quote's blank line
@example("word " + "para text here. " * 6 + "```", 100)  # cut mid-line right before an inline "```"
@example("\n```\n" + "word " * 10 + "\n    \n```\n", 60)  # a last line of spaces: no empty code card
@example("word " * 8 + "\n```\n\n\n\n\n    ```\n\n\n    ```\n" + "word " * 7, 60)  # no room for code left
def test_any_reply_with_code_splits_into_cards_with_its_code_as_code_and_its_text_as_text(markdown, limit):
    chunks = split_reply(markdown, limit)
    assert all(len(chunk) <= limit for chunk in chunks)
    assert all(_fences_closed(chunk) for chunk in chunks) or not _fences_closed(markdown)  # as written
    assert _shown_apart(chunks) == _code_and_text(markdown)
    assert all(chunk.strip() for chunk in chunks)  # no card of nothing
    assert sum(map(_empty_code_blocks, chunks)) <= _empty_code_blocks(markdown), chunks  # none added


@pytest.mark.parametrize("store", ["memory"], indirect=True)
async def test_a_card_cut_before_an_inline_fence_shows_it_as_text_and_no_code_block(make_bot):
    # the first card (4,000 characters) ends right before "```python": it starts the second card
    reply = "word " * 799 + "open ```python\nthen paste the script under it."
    bot = await make_bot(ScriptedRunner(lambda turn: TurnOutput(replies=[reply])), streaming="off")
    await bot.deliver(message_event("how do I add the script?"))
    await bot.gateway.drain()
    shown = [text_of(card) for card in bot.api.shown()]
    assert len(shown) == 2 and shown[0] == ("word " * 799 + "open")
    assert [t.type for card in shown for t in _parse(card) if t.type in ("fence", "code_block")] == []
    assert _code_and_text(shown[1]) == ("", "```pythonthenpastethescriptunderit.")  # as text, all of it
