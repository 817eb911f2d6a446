"""Fixtures shared by the adapters' tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from .live_pace import SharedRedis
from .telegram.fake_bot_api import FakeBotApi


@pytest.fixture
async def shared_redis() -> AsyncIterator[SharedRedis]:
    """Store clients on one real Redis prefix (ask for it first: the gateways built on them stop
    before its keys are deleted)."""
    shared = SharedRedis()
    yield shared
    await shared.close()


@pytest.fixture
async def bot_api() -> AsyncIterator[FakeBotApi]:
    """A fake Telegram Bot API server on a free loopback port (Telegram's tests, and replicas that
    serve Telegram beside Feishu)."""
    api = FakeBotApi()
    await api.start()
    yield api
    await api.stop()


@pytest.fixture
async def booking_runner() -> AsyncIterator[Any]:
    """The in-process runner of ``tests.agent.typed_graphs:booking`` (a typed interrupt), its
    record of resumed values cleared: the typed-form tests of every platform run it."""
    from clarigate.agent.harness import AgentSettings
    from clarigate.gateway.runners.in_process import LangGraphRunner
    from tests.agent import typed_graphs

    typed_graphs.RESUMED.clear()
    made = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.typed_graphs:booking")
    )
    yield made
    await made.aclose()


@pytest.fixture
async def environments() -> AsyncIterator[Any]:
    """The in-process runner of ``tests.agent.user_graphs:environments`` (options whose values are
    not their labels), its record of answers cleared: the picked-value tests of every platform."""
    from clarigate.agent.harness import AgentSettings
    from clarigate.gateway.runners.in_process import LangGraphRunner
    from tests.agent import user_graphs

    user_graphs.ANSWERS.clear()
    made = LangGraphRunner(
        AgentSettings(checkpointer_url="memory://", graph="tests.agent.user_graphs:environments")
    )
    yield made
    await made.aclose()
