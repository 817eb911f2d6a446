"""Text the agent cuts to a limit before a person sees it (a question, an option or field label, an
approval's context and Edit form, a form's current value, a progress line, the JSON a typed
interrupt expects) never ends inside a character as shown: an emoji sequence (a family, a skin
tone, a flag, a keycap) or a letter and its combining accent. The cut moves back to where that
character starts (``clarigate.agent.protocol.graphemes``); the limit and the ellipsis stay."""

from __future__ import annotations

from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.agent.approvals import actions_of, approval_request, cut_line
from clarigate.agent.interrupts import edit_request
from clarigate.agent.protocol import MAX_STRING, FormField, current_text, normalize_request
from clarigate.agent.protocol.coerce import cut
from clarigate.agent.run_events import PROGRESS_CHARS, progress_line
from clarigate.agent.typed_interrupts import typed_request
from tests.adapters.emoji_text import AT_THE_CUT, SEQUENCES, emoji_texts

ACCENTED = "e\u0301"  # a letter and a combining acute accent: one "é" as shown
assert ACCENTED in SEQUENCES
#: One character as shown, of two code points or more each: a cut after the first splits it.
SPLIT_BY_A_CUT = [*AT_THE_CUT, ACCENTED]


def _at_the_cut(limit: int, sequence: str, before: str = "a") -> str:
    """Text longer than ``limit`` whose cut (at ``limit - 1``, room for the ellipsis) falls just
    after the first code point of ``sequence``."""
    return before * (limit - 2) + sequence + " and then some more words"


def _assert_whole_prefix(shown: str, text: str, limit: int) -> None:
    """``shown`` fits ``limit``, ends in the ellipsis, and what is before it is a prefix of ``text``
    made of ``text``'s whole characters (grapheme clusters)."""
    assert len(shown) <= limit and shown.endswith("…"), shown
    kept = shown.removesuffix("…")
    assert text.startswith(kept)
    clusters = regex.findall(r"\X", kept)
    assert clusters == regex.findall(r"\X", text)[: len(clusters)], (kept[-3:], text)


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
@pytest.mark.parametrize("limit", [MAX_STRING, 60, 10])
def test_a_cut_ends_before_a_character_it_would_split(sequence: str, limit: int) -> None:
    text = _at_the_cut(limit, sequence)
    assert cut(text, limit) == "a" * (limit - 2) + "…"
    assert cut_line(text, limit) == "a" * (limit - 2) + "…"
    _assert_whole_prefix(cut(text, limit), text, limit)


@settings(max_examples=80, deadline=None)
@given(emoji_texts, st.sampled_from([2, 5, 33, MAX_STRING]))
def test_any_emoji_and_chinese_text_is_cut_within_the_limit_into_whole_characters(
    text: str, limit: int
) -> None:
    for shown in (cut(text, limit), cut_line(text, limit)):
        if len(text) <= limit:
            assert shown == text
        else:
            _assert_whole_prefix(shown, text, limit)


def test_text_that_fits_or_is_cut_between_characters_is_cut_as_before() -> None:
    assert cut("short") == "short" and cut_line("short") == "short"
    assert cut("ab cd" + "x" * 300, 4) == "ab…"  # white space before the ellipsis still dropped
    assert cut_line("ab cd" + "x" * 300, 4) == "ab …"
    assert cut("中" * 300) == "中" * (MAX_STRING - 1) + "…"


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_a_question_option_and_field_label_keep_their_characters_whole(sequence: str) -> None:
    text = _at_the_cut(MAX_STRING, sequence)
    label = _at_the_cut(MAX_STRING, sequence, before="l")
    request = normalize_request({"question": text, "options": [text, "Neither"]}, "c")
    _assert_whole_prefix(request.question, text, MAX_STRING)
    _assert_whole_prefix(request.options[0].label, text, MAX_STRING)
    form = normalize_request({"question": "Q", "fields": [{"label": label, "type": "text"}]}, "c")
    _assert_whole_prefix(form.fields[0].label, label, MAX_STRING)


def _approval(description: str, **args: Any) -> dict[str, Any]:
    return {"type": "tool_approval", "name": "drop_table", "args": args, "description": description}


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_an_approvals_context_keeps_its_characters_whole(sequence: str) -> None:
    call = '`drop_table(table="users")`'  # the call is kept whole: the description is cut before it
    room = MAX_STRING - len(call) - 1
    description = _at_the_cut(room, sequence, before="d")
    request = approval_request("i1", actions_of(_approval(description, table="users")), "en")
    assert request.context is not None
    about, shown_call = request.context.split("\n")
    assert shown_call == call
    _assert_whole_prefix(about, description, room)


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_an_approvals_edit_form_keeps_labels_and_placeholders_whole(sequence: str) -> None:
    note = _at_the_cut(150, sequence, before="n")
    value = _approval("", note=note)
    _assert_whole_prefix(edit_request("i1", actions_of(value), "en").fields[0].placeholder or "", note, 150)
    name = _at_the_cut(60, sequence, before="x")  # a tool's name cut to 60 in "name #n · argument"
    calls = {"action_requests": [{"name": name, "args": {"t": 1}}, {"name": name, "args": {"t": 2}}]}
    calls["review_configs"] = [{"action_name": name, "allowed_decisions": ["approve", "edit", "reject"]}]
    labels = [f.label for f in edit_request("i1", actions_of(calls), "en").fields]
    assert labels == ["x" * 58 + "… #1 · t", "x" * 58 + "… #2 · t"]


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_a_form_fields_current_value_in_text_keeps_its_characters_whole(sequence: str) -> None:
    default = _at_the_cut(200, sequence, before="v")
    field = FormField(name="note", label="Note", default=default)
    _assert_whole_prefix(current_text(field, "en"), default, 200)


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_a_progress_line_keeps_its_characters_whole(sequence: str) -> None:
    line = _at_the_cut(PROGRESS_CHARS, sequence, before="p")
    shown = progress_line({"progress": line})
    assert shown is not None
    _assert_whole_prefix(shown.text, line, PROGRESS_CHARS)


@pytest.mark.parametrize("sequence", SPLIT_BY_A_CUT)
def test_the_json_a_typed_interrupt_expects_keeps_its_characters_whole(sequence: str) -> None:
    def asked(key: str) -> str:
        too_many = {key: {"type": "string"}, **{f"f{i}": {"type": "string"} for i in range(40)}}
        schema = {"type": "object", "properties": too_many}  # asked as text, with the JSON expected
        context = typed_request("i1", {"question": "订哪一天？"}, schema, "zh").context
        assert context is not None
        return context

    plain = asked("k" * MAX_STRING)  # where the line's cut falls in the example's first key
    kept = len(plain.removesuffix("…")) - plain.index('{"') - 2
    context = asked(_at_the_cut(kept + 1, sequence, before="k"))  # the cut splits ``sequence``
    assert context.endswith('{"' + "k" * (kept - 1) + "…"), context
