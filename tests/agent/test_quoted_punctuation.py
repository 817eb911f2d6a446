"""A quoted value that ends its own sentence is not given a second full stop.

``/cancel`` quotes the open question: “Delete the test data?” must not read ``…data?”.`` nor
``…数据？」。``. The catalog drops the line's full stop after the closing quote when the quoted
value already ends in a sentence's punctuation, for every line and both languages, and leaves the
quoted value itself as it was.
"""

from __future__ import annotations

import re
from string import Formatter

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clarigate.agent.protocol import catalog

#: A ``{slot}`` between quotes, then the line's own full stop.
QUOTED_THEN_STOP = re.compile(r"[“「『\"‘]\{(\w+)\}[”」』\"’][.。]")
#: A value's last character that already ends a sentence, then a quote and a second stop.
DOUBLED = re.compile(r"[.?!。？！…][”」』\"’][.。]")

QUOTED = sorted(
    (key, locale)
    for key, lines in catalog.WORDS.items()
    for locale, line in lines.items()
    if QUOTED_THEN_STOP.search(line)
)
ENDINGS = ["?", "？", ".", "!", "。", "！", "…"]


def filled(key: str, locale: str, value: str) -> str:
    """The line ``key`` in ``locale`` with every one of its slots holding ``value``."""
    names = {name for _, name, _, _ in Formatter().parse(catalog.WORDS[key][locale]) if name}
    return catalog.text(key, locale, **dict.fromkeys(names, value))  # type: ignore[arg-type]


def test_the_lines_that_quote_a_value_before_their_stop_are_found() -> None:
    assert ("cancelled", "en") in QUOTED
    assert ("cancelled_interrupt", "zh") in QUOTED


@pytest.mark.parametrize(("key", "locale"), QUOTED)
@pytest.mark.parametrize("ending", ENDINGS)
def test_a_quoted_value_ending_a_sentence_gets_no_second_stop(key: str, locale: str, ending: str) -> None:
    value = f"Delete the test data{ending}" if locale == "en" else f"删除测试数据{ending}"
    line = filled(key, locale, value)
    assert not DOUBLED.search(line), line
    assert value in line  # the quoted text itself is untouched


@pytest.mark.parametrize(("key", "locale"), QUOTED)
def test_a_quoted_value_without_its_own_ending_keeps_the_lines_stop(key: str, locale: str) -> None:
    line = filled(key, locale, "Book the trip")
    assert re.search(r"Book the trip[”」』\"’][.。]", line), line


def test_the_cancel_notice_reads_as_one_sentence_per_language() -> None:
    question = "Delete the test data? This cannot be undone."
    assert catalog.text("cancelled", "en", question=question) == (
        "✖ Cancelled the question “Delete the test data? This cannot be undone.”"
        " I will go on without the answer."
    )
    assert catalog.text("cancelled_interrupt", "en", question="Book the trip?") == (
        "✖ Cancelled the question “Book the trip?”"
    )
    assert catalog.text("cancelled_interrupt", "zh", question="要订票吗？") == "✖ 已取消问题「要订票吗？」"
    assert (
        catalog.text("cancelled_interrupt", "zh", question="Book the trip")
        == "✖ 已取消问题「Book the trip」。"
    )


@given(st.text(min_size=1, max_size=40), st.sampled_from(ENDINGS), st.sampled_from(catalog.LOCALES))
def test_any_question_ending_in_punctuation_is_quoted_whole_and_stopped_once(
    words: str, ending: str, locale: str
) -> None:
    question = words + ending
    line = catalog.text("cancelled_interrupt", locale, question=question)
    assert line.endswith(question + ("”" if locale == "en" else "」"))
