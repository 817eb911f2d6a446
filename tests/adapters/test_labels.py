"""Option labels cut to a platform's limit stay tellable apart (``clarigate.adapters.labels``)."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from clarigate.adapters.labels import labels_are_cut, shown_labels

from .emoji_text import emoji_texts, whole

DROP = "Yes, drop the table users_archive_2019 and every index on it, then "


def test_labels_that_fit_are_shown_as_written():
    assert shown_labels(["eu", "us "], 60) == ["eu", "us "]


def test_labels_differing_only_past_the_limit_are_numbered_and_keep_their_difference():
    labels = [DROP + tail for tail in ("vacuum", "reindex the rest", "keep a backup", "tell the team")]
    shown = shown_labels(labels, 60)
    assert all(len(text) <= 60 for text in shown)
    assert [text.split(". ", 1)[0] for text in shown] == ["1", "2", "3", "4"]
    assert shown[0].startswith("1. Yes, drop the") and shown[0].endswith("then vacuum")
    assert shown[2].endswith("keep a backup") and "…" in shown[2]
    assert len(set(shown)) == 4


def test_a_cut_label_whose_beginning_differs_is_cut_at_its_end():
    shown = shown_labels(["Keep it " + "x" * 80, "Drop it"], 40)
    assert shown == ["1. Keep it " + "x" * 28 + "…", "2. Drop it"]


words = st.text(alphabet="abcdefghij", min_size=1, max_size=12)


@given(
    prefix=st.text(alphabet="abc xyz", min_size=0, max_size=300),
    tails=st.lists(words, min_size=2, max_size=8, unique=True),
    limit=st.integers(min_value=40, max_value=120),
)
def test_shown_labels_fit_and_stay_distinct(prefix, tails, limit):
    labels = [f"{prefix} {tail}." for tail in tails]
    shown = shown_labels(labels, limit)
    assert all(len(text) <= limit for text in shown)
    assert len(set(shown)) == len(labels)


@settings(max_examples=300, deadline=None)
@given(st.lists(emoji_texts, min_size=2, max_size=6), st.integers(10, 40))
def test_labels_of_emoji_and_chinese_are_never_cut_inside_a_character(labels: list[str], limit: int):
    for shown in shown_labels(labels, limit):
        assert len(shown) <= limit
        text = re.sub(r"^\d+\. ", "", shown) if labels_are_cut(labels, limit) else shown
        assert all(whole(part) for part in text.split("…")), shown


def test_a_family_at_the_cut_is_left_whole():
    family = "👨\u200d👩\u200d👧"
    labels = ["a" * 13 + family + "b" * 10, "c" * 30]
    first, _ = shown_labels(labels, 20)
    assert first == "1. " + "a" * 13 + "…"
