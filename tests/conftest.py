"""Fixtures shared across test folders: a gateway driven by the in-memory test platform."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from gateway.config import GatewayConfig
from gateway.core import Gateway
from gateway.runner import AgentRunner
from gateway.store.base import Store
from gateway.testing import ScriptedRunner, TestAdapter

GatewayFactory = Callable[..., Awaitable[tuple[Gateway, TestAdapter]]]


def test_config(**overrides: object) -> GatewayConfig:
    """A config for tests: small stale-claim idle time, a few workers, no environment surprises."""
    values: dict[str, object] = {"workers": 3, "stale_claim_seconds": 0.3, "shutdown_grace_seconds": 1.0}
    values.update(overrides)
    return GatewayConfig(**values)


@pytest.fixture
async def make_gateway() -> AsyncIterator[GatewayFactory]:
    """Build started gateways (with a ``TestAdapter``) on a given store; all stopped afterwards."""
    started: list[Gateway] = []

    async def build(
        store: Store, runner: AgentRunner | None = None, *, start: bool = True, **config: object
    ) -> tuple[Gateway, TestAdapter]:
        gateway = Gateway(test_config(**config), store, runner or ScriptedRunner())
        adapter = TestAdapter(gateway)
        gateway.register(adapter)
        if start:
            await gateway.start()
        started.append(gateway)
        return gateway, adapter

    yield build
    for gateway in started:
        await gateway.stop(grace=0)
