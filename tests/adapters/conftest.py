"""Fixtures shared by the adapters' tests."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .live_pace import SharedRedis


@pytest.fixture
async def shared_redis() -> AsyncIterator[SharedRedis]:
    """Store clients on one real Redis prefix (ask for it first: the gateways built on them stop
    before its keys are deleted)."""
    shared = SharedRedis()
    yield shared
    await shared.close()
