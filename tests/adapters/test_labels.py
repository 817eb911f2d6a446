"""Option labels cut to a platform's limit stay tellable apart (``clarigate.adapters.labels``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clarigate.adapters.labels import shown_labels

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
