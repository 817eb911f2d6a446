"""A dict that keeps at most so many entries: the memos a process keeps in memory (names looked up,
live cards, interrupts warned about, …) stay bounded however long it runs.

Writing past ``limit`` drops the oldest entries. With ``refresh`` a key written again becomes the
newest (the least recently written goes first); without it, a key keeps the place of its first
write (first in, first out). Reading never moves a key.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TypeVar

K = TypeVar("K")
V = TypeVar("V")


class BoundedDict(OrderedDict[K, V]):
    """At most ``limit`` entries, the oldest dropped first (see the module's docstring)."""

    def __init__(self, limit: int, *, refresh: bool = False) -> None:
        super().__init__()
        self.limit = limit
        self.refresh = refresh

    def __setitem__(self, key: K, value: V) -> None:
        super().__setitem__(key, value)
        if self.refresh:
            self.move_to_end(key)
        while len(self) > self.limit:
            self.popitem(last=False)
