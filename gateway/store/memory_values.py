"""The embedded store's keys: values under Redis' key names, each with an optional expiry.

Expiry follows a clock that tests may replace; an expired key reads as missing and is dropped,
and keys nobody reads again are swept away now and then.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .base import Store
from .keys import StoreKeys


class MemoryValues(Store):
    """The keys with expiry every part of ``MemoryStore`` keeps its state in."""

    def __init__(self, prefix: str, *, clock: Callable[[], float]) -> None:
        self.prefix = prefix
        self.keys = StoreKeys(prefix)
        self.round_trips = 0  # nothing leaves the process; kept for symmetry with RedisStore
        self._clock = clock
        self._values: dict[str, tuple[Any, float | None]] = {}  # key -> (value, expires at)
        self._writes_since_sweep = 0

    def _get(self, key: str) -> Any | None:
        item = self._values.get(key)
        if item is None:
            return None
        value, expires_at = item
        if expires_at is not None and expires_at <= self._clock():
            del self._values[key]
            return None
        return value

    def _set(
        self, key: str, value: Any, ttl_seconds: float | None = None, *, at: float | None = None
    ) -> None:
        expires_at = at if at is not None else (None if ttl_seconds is None else self._clock() + ttl_seconds)
        self._values[key] = (value, expires_at)
        self._writes_since_sweep += 1
        if self._writes_since_sweep > max(1024, len(self._values) // 4):
            self._sweep()

    def _sweep(self) -> None:
        """Drop expired keys nobody reads again (dedupe markers, done markers), amortized over writes."""
        now = self._clock()
        expired = [key for key, (_, at) in self._values.items() if at is not None and at <= now]
        for key in expired:
            del self._values[key]
        self._writes_since_sweep = 0

    def _expires_at(self, key: str) -> float | None:
        return self._values[key][1] if self._get(key) is not None else None

    def _refresh(self, key: str, ttl_seconds: float) -> None:
        value = self._get(key)
        if value is not None:
            self._set(key, value, ttl_seconds)
