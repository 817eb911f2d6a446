"""``BoundedDict``: the shared bound of the in-process memos (names, live cards, warned interrupts…)."""

from __future__ import annotations

from clarigate.agent.bounded import BoundedDict


def test_it_keeps_at_most_limit_entries_dropping_the_oldest() -> None:
    memo: BoundedDict[str, int] = BoundedDict(3)
    for number, key in enumerate("abcde"):
        memo[key] = number
    assert list(memo.items()) == [("c", 2), ("d", 3), ("e", 4)]


def test_without_refresh_a_key_written_again_keeps_its_first_place() -> None:
    memo: BoundedDict[str, int] = BoundedDict(2)
    memo["a"], memo["b"] = 1, 2
    memo["a"] = 10  # first in, first out: "a" is still the oldest
    memo["c"] = 3
    assert dict(memo) == {"b": 2, "c": 3}


def test_with_refresh_a_key_written_again_becomes_the_newest() -> None:
    memo: BoundedDict[str, int] = BoundedDict(2, refresh=True)
    memo["a"], memo["b"] = 1, 2
    memo["a"] = 10  # least recently written goes first: now "b"
    memo["c"] = 3
    assert list(memo.items()) == [("a", 10), ("c", 3)]


def test_reading_never_moves_a_key() -> None:
    memo: BoundedDict[str, int] = BoundedDict(2, refresh=True)
    memo["a"], memo["b"] = 1, 2
    assert memo["a"] == 1 and memo.get("a") == 1 and "a" in memo
    memo["c"] = 3
    assert list(memo) == ["b", "c"]


def test_entries_removed_free_their_room() -> None:
    memo: BoundedDict[str, int] = BoundedDict(2)
    memo["a"], memo["b"] = 1, 2
    del memo["a"]
    memo["c"] = 3
    assert list(memo) == ["b", "c"]
